"""The browser face: ``p2p web`` serves a local page over the same ``p2p.peer`` API the
shell uses, in the same process (docs/web.md).

One job a module: ``guard`` (who may drive the page: secret, Host, Origin), ``server``
(aiohttp: the page, its assets, the WebSocket), ``session`` (the page's actions turned
into ``Peer`` calls, lines and snapshots), ``connect`` (the peer: brokers, ``/local``,
resuming, notifications), ``snapshot`` (what the page is sent), ``local`` (hot-seat
and against the computer), ``boards`` (a position for the page, from the game's web view
in the registry or the fallback), ``i18n`` (German and English), ``settings``, and
``static/`` (HTML, CSS and JavaScript modules, shipped in the package, no build step).
Neither face imports the other.
"""
