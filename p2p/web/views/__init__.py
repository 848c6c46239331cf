"""Each game's board in the browser: ``VIEW = WebView(...)``, named by ``GameSpec.web``."""
