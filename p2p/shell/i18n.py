"""Every text the shell shows, in German and English.

The catalogue maps a key to ``(german, english)``; ``Translator.t(key, **fields)`` formats
it in the current language.  Code, comments and docs stay English; only this table speaks
to the user.  A missing key shows as the key itself (visible in tests, never a crash).
"""

from __future__ import annotations

import os
from collections.abc import Mapping

LANGUAGES: tuple[str, ...] = ("de", "en")

CATALOGUE: dict[str, tuple[str, str]] = {
    # -- frame titles and status -----------------------------------------------------
    "pane.lobby": ("Lobby ({count} online)", "Lobby ({count} online)"),
    "pane.lobby.offline": ("Lobby (offline)", "Lobby (offline)"),
    "pane.chat": ("Chat", "Chat"),
    "pane.board": ("Brett", "Board"),
    "status.idle": ("Kein Spiel · /help für Befehle", "No game · /help for commands"),
    "status.round": ("Runde {round} · Am Zug: {seat}", "Round {round} · To move: {seat}"),
    "status.you": ("Runde {round} · Am Zug: {seat} (du)", "Round {round} · To move: {seat} (you)"),
    "status.thinking": ("Runde {round} · {seat} denkt nach …", "Round {round} · {seat} is thinking …"),
    "status.over": ("Runde {round} · vorbei: {result}", "Round {round} · over: {result}"),
    "status.score": ("Stand {score}", "Score {score}"),
    "status.forming": ("Code {code} · {game} · warte auf Mitspieler ({open} offen)", "Code {code} · {game} · waiting for players ({open} open)"),
    "status.replay": ("Wiedergabe Zug {ply}/{total}", "Replay move {ply}/{total}"),
    "status.offline": ("offline", "offline"),
    "status.online": ("verbunden mit {broker}", "connected to {broker}"),
    "status.connecting": ("verbinde mit {broker} …", "connecting to {broker} …"),
    "status.reconnecting": ("Verbindung verloren, verbinde neu …", "connection lost, reconnecting …"),
    "result.win": ("{seat} gewinnt", "{seat} wins"),
    "result.wins": ("{seats} gewinnen", "{seats} win"),
    "result.draw": ("unentschieden", "a draw"),
    "lobby.empty": ("(niemand sonst da)", "(nobody else here)"),
    "lobby.busy": ("spielt", "busy"),
    "lobby.free": ("frei", "free"),
    "lobby.you": ("du", "you"),
    "board.none": (
        "Kein Spiel.\n\nLokal spielen:\n /play connect4\n /play connect4 ai\n /play cube\n /play chess4\n\nOnline:\n /invite NICK SPIEL\n /private SPIEL\n /join CODE",
        "No game.\n\nPlay locally:\n /play connect4\n /play connect4 ai\n /play cube\n /play chess4\n\nOnline:\n /invite NICK GAME\n /private GAME\n /join CODE",
    ),
    "board.preview": ("Vorschau {pillar}: Ebene {level}", "Preview {pillar}: level {level}"),
    "board.level": ("Ebene {level}", "level {level}"),
    "board.last": ("Letzter Zug: {move}", "Last move: {move}"),
    "board.out": ("raus: {seats}", "out: {seats}"),
    "board.points": ("Punkte: {points}", "Points: {points}"),
    # -- seats ---------------------------------------------------------------------------
    "seat.Red": ("Rot", "Red"),
    "seat.Yellow": ("Gelb", "Yellow"),
    "seat.Blue": ("Blau", "Blue"),
    "seat.Green": ("Grün", "Green"),
    "seat.White": ("Weiß", "White"),
    "seat.Black": ("Schwarz", "Black"),
    "seat.Player 1": ("Spieler 1", "Player 1"),
    "seat.Player 2": ("Spieler 2", "Player 2"),
    "seat.Player 3": ("Spieler 3", "Player 3"),
    "seat.Player 4": ("Spieler 4", "Player 4"),
    "seat.computer": ("{seat} (Computer {level})", "{seat} (computer {level})"),
    "game.connect4": ("Vier in einer Reihe", "Connect Four"),
    "game.cube": ("Viergewinnt 3D", "3D Connect Four"),
    "game.chess4": ("Schach zu viert", "Four-player chess"),
    # -- messages ------------------------------------------------------------------------
    "msg.welcome": (
        "Willkommen bei p2p. /help zeigt die Befehle, /play connect4 startet ein Spiel.",
        "Welcome to p2p. /help lists the commands, /play connect4 starts a game.",
    ),
    "msg.local_mode": (
        "Ohne Broker: nur lokales Spiel. /play connect4 · /play cube · /play chess4",
        "No broker: local play only. /play connect4 · /play cube · /play chess4",
    ),
    "msg.unknown_command": ("Unbekannter Befehl: {name} (/help)", "Unknown command: {name} (/help)"),
    "msg.usage": ("Aufruf: {usage}", "Usage: {usage}"),
    "msg.no_game": ("Es läuft kein Spiel.", "No game is running."),
    "msg.not_your_turn": ("Du bist nicht am Zug.", "It is not your turn."),
    "msg.computer_thinking": ("Der Computer denkt noch nach.", "The computer is still thinking."),
    "msg.too_fast": ("Zu schnell – Eingabe kurz gesperrt.", "Too fast – input briefly locked."),
    "msg.bad_move": ("Ungültiger Zug {move}: {reason}", "Invalid move {move}: {reason}"),
    "msg.game_over": ("Die Runde ist vorbei. /again für eine neue Runde.", "The round is over. /again for another round."),
    "msg.round_over": ("Runde {round} vorbei: {result}. Stand {score}. /again · /replay · /analyze", "Round {round} over: {result}. Score {score}. /again · /replay · /analyze"),
    "msg.new_round": ("Runde {round}: {game}, es beginnt {seat}.", "Round {round}: {game}, {seat} starts."),
    "msg.unknown_game": ("Unbekanntes Spiel {name} (connect4, cube, chess4).", "Unknown game {name} (connect4, cube, chess4)."),
    "msg.bad_option": ("Ungültige Option: {reason}", "Invalid option: {reason}"),
    "msg.unknown_level": ("Unbekannte Stufe {level} (möglich: {levels}).", "Unknown level {level} (possible: {levels})."),
    "msg.no_computer": ("Für {game} gibt es (noch) keinen Computerspieler.", "There is no computer player for {game} (yet)."),
    "msg.level_set": ("Computerstufe für {game}: {level}", "Computer level for {game}: {level}"),
    "msg.levels": ("Stufen für {game}: {levels} (jetzt: {level})", "Levels for {game}: {levels} (now: {level})"),
    "msg.undo": ("Zurückgenommen: {moves}", "Taken back: {moves}"),
    "msg.nothing_to_undo": ("Nichts zurückzunehmen.", "Nothing to take back."),
    "msg.undo_decided": ("Die Runde ist entschieden; kein Zurücknehmen mehr. /again", "The round is decided; no more take-backs. /again"),
    "msg.undo_online": ("Online kann kein Zug zurückgenommen werden.", "Moves cannot be taken back online."),
    "msg.replay_needs_end": ("Wiedergabe erst nach dem Ende der Runde.", "Replay only after the round has ended."),
    "msg.replay_help": ("Wiedergabe: /replay next · prev · start · end · stop", "Replay: /replay next · prev · start · end · stop"),
    "msg.replay_stopped": ("Wiedergabe beendet.", "Replay finished."),
    "msg.analysis_unavailable": ("Analyse gibt es nur für beendete Runden Vier in einer Reihe.", "Analysis exists only for finished Connect Four rounds."),
    "msg.analysis_missing": ("Die Analyse ist noch nicht eingebaut (p2p.ai.connect4_ai fehlt).", "Analysis is not available (p2p.ai.connect4_ai missing)."),
    "msg.analysis_running": ("Analysiere die Runde …", "Analysing the round …"),
    "msg.analysis_line": ("Zug {ply} {seat} {move}: {verdict}", "Move {ply} {seat} {move}: {verdict}"),
    "msg.analysis_failed": ("Analyse fehlgeschlagen: {reason}", "Analysis failed: {reason}"),
    "analysis.win": ("hält den Sieg", "keeps a win"),
    "analysis.draw": ("hält remis", "keeps a draw"),
    "analysis.loss": ("verliert", "loses"),
    "analysis.unknown": ("(zu früh für den Löser)", "(too early for the solver)"),
    "analysis.mistake": ("Fehler, vorher: {was}", "mistake, before: {was}"),
    "analysis.decisive": ("entscheidender Zug", "decisive move"),
    "analysis.summary": ("Analyse fertig: {mistakes} Fehler.", "Analysis done: {mistakes} mistakes."),
    "msg.hint_local_only": ("Tipps gibt es nur im lokalen Spiel.", "Hints are for local play only."),
    "msg.hint": ("Tipp: {move}", "Hint: {move}"),
    "msg.rules_none": ("Kein Spiel gewählt: /rules connect4 · cube · chess4", "No game chosen: /rules connect4 · cube · chess4"),
    "msg.nick_set": ("Dein Name ist jetzt {nick}.", "Your name is now {nick}."),
    "msg.nick_bad": ("Ein Name hat 1–20 Zeichen ohne Leerzeichen.", "A name has 1–20 characters without spaces."),
    "msg.lang_set": ("Sprache: Deutsch", "Language: English"),
    "msg.lang_bad": ("Sprachen: de, en", "Languages: de, en"),
    "msg.notify_on": ("Benachrichtigungen an.", "Notifications on."),
    "msg.notify_off": ("Benachrichtigungen aus.", "Notifications off."),
    "msg.broker_set": ("Broker gespeichert: {broker}. Wirkt beim nächsten Start (oder /connect).", "Broker saved: {broker}. Takes effect on next start (or /connect)."),
    "msg.broker_bad": ("Broker-Adresse wie mqtt://host:1883", "Broker address like mqtt://host:1883"),
    "msg.settings_corrupt": ("Einstellungen unlesbar ({path}), nutze Standardwerte.", "Settings unreadable ({path}), using defaults."),
    "msg.settings_unsaved": ("Einstellungen nicht gespeichert: {reason}", "Settings not saved: {reason}"),
    "msg.chat_offline": ("(nicht verbunden – niemand liest mit)", "(not connected – nobody is reading)"),
    "msg.offline_command": ("Dafür braucht es eine Verbindung zum Broker.", "This needs a connection to a broker."),
    "msg.internal_error": ("Interner Fehler (Details im Log {path}).", "Internal error (details in the log {path})."),
    "msg.render_error": ("(Anzeigefehler – Details in shell.log)", "(display error – details in shell.log)"),
    "msg.you": ("du", "you"),
    "msg.computer": ("Computer", "computer"),
    "msg.stats": ("Statistik {game} gegen Computer {level}: {won} gewonnen, {lost} verloren, {drawn} unentschieden", "Stats {game} vs computer {level}: {won} won, {lost} lost, {drawn} drawn"),
    "msg.quit_hint": ("/quit oder Strg-Q beendet.", "/quit or Ctrl-Q quits."),
    # -- online ------------------------------------------------------------------------
    "net.privacy": (
        (
            "Hinweis: Der Broker {broker} ist öffentlich. Die Lobby (dein Name, der Lobby-Chat) kann jeder lesen; "
            "Züge und Chat einer Runde sind Ende-zu-Ende verschlüsselt, doch wer wann mit wem spielt, sieht man. "
            "Der Betreiber sieht deine IP-Adresse."
        ),
        (
            "Note: the broker {broker} is public. Anyone can read the lobby (your nickname, lobby chat); "
            "a round's moves and chat are end-to-end encrypted, but who plays with whom and when is visible. "
            "Its operator sees your IP address."
        ),
    ),
    "net.unreachable": (
        "Broker {broker} nicht erreichbar ({reason}). /local startet einen lokalen Broker mit Computergegner; sonst nur lokales Spiel.",
        "Broker {broker} cannot be reached ({reason}). /local starts a local broker with a computer opponent; otherwise local play only.",
    ),
    "net.connected": ("Verbunden mit {broker} als {nick} [{fp}].", "Connected to {broker} as {nick} [{fp}]."),
    "net.disconnected": ("Verbindung verloren – verbinde neu …", "Connection lost – reconnecting …"),
    "net.reconnected": ("Wieder verbunden.", "Reconnected."),
    "net.resynced": ("Runde abgeglichen ({count} Ereignisse).", "Round resynchronised ({count} events)."),
    "net.local_starting": ("Starte lokalen Broker …", "Starting a local broker …"),
    "net.local_started": ("Lokaler Broker läuft auf {broker}; Computerspieler {bot} ist in der Lobby: /invite {bot} connect4", "Local broker running at {broker}; computer player {bot} is in the lobby: /invite {bot} connect4"),
    "net.local_failed": ("Lokaler Broker startet nicht: {reason}", "Local broker does not start: {reason}"),
    "net.unavailable": ("Online-Spiel ist in dieser Version noch nicht verfügbar (p2p.peer fehlt).", "Online play is not available in this build (p2p.peer missing)."),
    "net.joined": ("{nick} ist da.", "{nick} joined."),
    "net.left": ("{nick} ist weg.", "{nick} left."),
    "net.invite_sent": ("Einladung an {nicks} zu {game} gesendet (Code {code}).", "Invitation to {nicks} for {game} sent (code {code})."),
    "net.invited": (">>> {nick} lädt dich zu {game} ein. /accept oder /decline <<<", ">>> {nick} invites you to {game}. /accept or /decline <<<"),
    "net.invite_details": ("    Optionen: {options} · Beginner: {how}", "    options: {options} · starter: {how}"),
    "net.accepted": ("{nick} hat angenommen.", "{nick} accepted."),
    "net.declined": ("{nick} hat abgelehnt.", "{nick} declined."),
    "net.cancelled": ("Einladung zurückgezogen.", "Invitation cancelled."),
    "net.no_invite": ("Keine offene Einladung.", "No open invitation."),
    "net.unknown_nick": ("Niemand namens {nick} in der Lobby.", "Nobody called {nick} in the lobby."),
    "net.commit": ("Festlegung von {nick}: {commit}", "Commitment from {nick}: {commit}"),
    "net.reveal": ("Aufdeckung von {nick}: {reveal}", "Reveal from {nick}: {reveal}"),
    "net.starter": ("Es beginnt {nick} ({how}).", "{nick} starts ({how})."),
    "net.starter.drawn": ("ausgelost", "drawn"),
    "net.starter.chosen": ("gewählt", "chosen"),
    "net.round_started": ("Runde {code} beginnt: {game}.", "Round {code} starts: {game}."),
    "net.moved": ("{nick}: {move}", "{nick}: {move}"),
    "net.resigned": ("{nick} gibt auf.", "{nick} resigns."),
    "net.left_round": ("{nick} hat die Runde verlassen.", "{nick} left the round."),
    "net.rejected": ("Warnung: Ereignis von {who} verworfen ({reason}).", "Warning: event from {who} rejected ({reason})."),
    "net.error": ("Fehler: {reason}", "Error: {reason}"),
    "net.autostart": (
        "Die Runde beginnt von selbst, sobald alle angenommen haben (Phase {phase}; Plätze: {seats}; offen: {waiting}).",
        "The round starts by itself once everyone has accepted (phase {phase}; seats: {seats}; open: {waiting}).",
    ),
    "net.starter_set": ("Beginner der nächsten Einladung: {who} (me/NICK/draw).", "Starter of the next invitation: {who} (me/NICK/draw)."),
    "net.private_open": (
        "Private Runde {game} eröffnet; freie Plätze für den Code: {seats}.",
        "Private round of {game} opened; seats open for the code: {seats}.",
    ),
    "net.private_code": (
        ">>> Beitrittscode: {spoken} <<< Mitspieler tippen /join {code} (gilt {minutes} min).",
        ">>> Join code: {spoken} <<< Others type /join {code} (valid {minutes} min).",
    ),
    "net.open_bad": ("open=N: 1 bis 3 freie Plätze für den Code.", "open=N: 1 to 3 seats open for the code."),
    "net.code_bad": (
        "Ungültiger Code {code}: 6 Zeichen aus 2–9 und A–Z ohne I, L, O.",
        "Invalid code {code}: 6 characters from 2–9 and A–Z without I, L, O.",
    ),
    "net.code_unknown": (
        "Keine offene Runde mit Code {code} – falsch getippt, abgelaufen oder schon voll.",
        "No open round behind code {code} – mistyped, expired or already full.",
    ),
    "net.code_closed": (
        "Die Runde mit Code {code} hat schon begonnen oder ist vorbei.",
        "The round behind code {code} has already started or is over.",
    ),
    "net.joining": ("Suche die Runde mit Code {code} …", "Looking for the round behind code {code} …"),
    "net.joined_round": (
        "Runde {game} mit Code {code} beigetreten; sie beginnt, sobald alle Plätze besetzt sind.",
        "Joined the {game} round behind code {code}; it starts once every seat is taken.",
    ),
    "net.busy": ("Du bist schon in einer Runde: erst /leave.", "You are already in a round: /leave first."),
    "net.seed": ("Zufallswert der Runde (aus allen Aufdeckungen): {seed}", "Round seed (from all reveals): {seed}"),
    "net.sealed": ("Aufgabe/Verlassen ist jetzt Teil der Runde.", "A resignation/leave is now part of the round."),
    "net.round_over": ("Runde {round} vorbei: {result} ({reason}). /again für eine neue Runde.", "Round {round} over: {result} ({reason}). /again for another round."),
    "net.drawing": ("Alle Plätze besetzt; der Beginner wird ausgelost.", "All seats taken; drawing the starting player."),
    "net.expired": ("Die Einladung ist abgelaufen.", "The invitation expired."),
    "net.forfeited": (
        "{nick} hat {secs} s nicht gezogen ({how}) und ist raus: Zeitüberschreitung.",
        "{nick} did not move for {secs} s ({how}) and is out: turn timeout.",
    ),
    "net.forfeit.offline": ("offline gegangen", "went offline"),
    "net.forfeit.silent": ("keine Antwort", "no answer"),
    "net.rewound": (
        "Ein später Zug kam erst nach der Zeitüberschreitung an; die Runde folgt dem Admin.",
        "A late move arrived after the turn timeout; the round follows the admin.",
    ),
    "net.auto_declined": ("Einladung automatisch abgelehnt: du bist schon in einer Runde.", "Invitation declined automatically: you are already in a round."),
    "chat.round_tag": ("[Runde]", "[round]"),
    "net.only_admin": ("Das darf nur, wer eingeladen hat.", "Only the inviting player may do that."),
    # -- round life and input (shell-life) ------------------------------------------------
    "move.no_column": ("Es gibt keine Spalte {column} (1–{width}).", "There is no column {column} (1–{width})."),
    "move.no_pillar": ("Es gibt keine Säule {pillar} (a1–d4).", "There is no pillar {pillar} (a1–d4)."),
    "move.no_square": ("Es gibt kein Feld {square} auf diesem Brett.", "There is no square {square} on this board."),
    "move.ambiguous": ("Mehrere Züge nach {square}: {moves} – bitte von-nach tippen.", "Several moves go to {square}: {moves} – type from-to."),
    "move.no_piece_to": ("Keine Figur {piece} kann nach {square} ziehen.", "No {piece} can move to {square}."),
    "move.select_first": (
        "Kein Zug nach {square}: erst eine eigene Figur wählen (ihr Feld tippen) oder von-nach tippen, z. B. h2-h4.",
        "No move to {square}: select one of your pieces first (type its square) or type from-to, e.g. h2-h4.",
    ),
    "move.selected": ("{piece} auf {square} gewählt – jetzt das Zielfeld tippen.", "{piece} on {square} selected – now type its target square."),
    "move.not_your_turn": ("Du bist nicht am Zug – {move} wurde nicht gespielt.", "It is not your turn – {move} was not played."),
    "round.away_win": (
        "{nick} ist offline gegangen – du gewinnst in {secs} s, falls {nick} nicht zurückkommt.",
        "{nick} went offline — you win in {secs} s unless {nick} returns.",
    ),
    "round.away_out": (
        "{nick} ist offline gegangen – {nick} ist in {secs} s raus, falls {nick} nicht zurückkommt.",
        "{nick} went offline — {nick} is out in {secs} s unless {nick} returns.",
    ),
    "round.away_later": (
        "{nick} ist offline gegangen – ist {nick} am Zug, bleiben {secs} s zum Zurückkommen.",
        "{nick} went offline — once it is {nick}'s turn, {nick} has {secs} s to return.",
    ),
    "round.back": ("{nick} ist wieder da – die Runde geht weiter.", "{nick} is back — the round goes on."),
    "status.away": ("{nick} offline · raus in {secs} s", "{nick} offline · out in {secs} s"),
    "round.resumed": (
        "Runde {code} ({game}) aus dem Protokoll wieder aufgenommen ({moves} Züge); gleiche mit den anderen ab …",
        "Resumed round {code} ({game}) from its log ({moves} moves); catching up with the others …",
    ),
    "round.resume_failed": ("Runde {code} nicht wieder aufgenommen: {reason}", "Round {code} not resumed: {reason}"),
    "round.history": ("Bisher: {moves}", "So far: {moves}"),
    "round.you_left": ("Du hast die Runde verlassen.", "You left the round."),
    "round.resigned": ("{nick} gibt auf.", "{nick} resigns."),
    "play.start_bad": (
        "start=ich|computer|abwechselnd (me|computer|alternate)",
        "start=me|computer|alternate (ich|computer|abwechselnd)",
    ),
    "play.start_rule.me": ("du beginnst jede Runde", "you start every round"),
    "play.start_rule.computer": ("der Computer beginnt jede Runde", "the computer starts every round"),
    "play.start_rule.alternate": ("der Beginn wechselt", "the start alternates"),
    "play.start_rule": ("Beginn: {rule}.", "Start: {rule}."),
    "net.start_now_hint": ("/start jetzt beginnt sofort mit allen, die schon da sind.", "/start now begins at once with everyone who is here."),
    "net.start_nobody": ("Noch ist niemand beigetreten – der Code gilt weiter.", "Nobody has joined yet – the code stays valid."),
    "net.start_now": (
        "Start mit {nicks}: {game} mit den Anwesenden, jede/r bekommt eine direkte Einladung (/accept).",
        "Starting with {nicks}: {game} with those who are here; each gets a direct invitation (/accept).",
    ),
    # -- notifications ---------------------------------------------------------------------
    "notify.turn": ("Du bist am Zug", "Your turn"),
    "notify.invite": ("Einladung von {nick}", "Invitation from {nick}"),
}

HELP_LINES: dict[str, tuple[str, str]] = {
    "/play GAME [ai|2p] [LEVEL]": ("lokal spielen (connect4, cube, chess4)", "play locally (connect4, cube, chess4)"),
    "1..7 · a1..d4 · h2-h4": ("ein Zug (Ziffer allein spielt sofort)", "a move (a lone digit plays at once)"),
    "/undo · /again · /resign": ("zurücknehmen · neue Runde · aufgeben", "take back · another round · resign"),
    "/replay [next|prev|end] · /analyze · /hint": ("Wiedergabe · Analyse · Tipp", "replay · analysis · hint"),
    "/level [LEVEL] · /stats · /rules [GAME]": ("Computerstufe · Statistik · Regeln", "computer level · stats · rules"),
    "/invite NICK GAME · /accept · /decline · /cancel": ("Einladungen", "invitations"),
    "/private GAME [open=N] · /join CODE": ("private Runde mit Beitrittscode · per Code beitreten", "private round behind a join code · join by code"),
    "/start · /starter NICK|draw · /leave": ("Runde starten · Beginner · verlassen", "start round · starter · leave"),
    "/local · /connect": ("lokaler Broker mit Computer · neu verbinden", "local broker with computer · reconnect"),
    "/nick NAME · /broker URL · /lang de|en · /notify on|off": ("Einstellungen", "settings"),
    "/help · /quit (Strg-Q)": ("Hilfe · beenden", "help · quit (Ctrl-Q)"),
    "TEXT": ("Chat", "chat"),
}


def detect_language(environ: Mapping[str, str] | None = None) -> str:
    """``"de"`` when the locale says German, else ``"en"`` (LC_ALL, LC_MESSAGES, LANG, LANGUAGE)."""
    env = os.environ if environ is None else environ
    for var in ("LC_ALL", "LC_MESSAGES", "LANG", "LANGUAGE"):
        value = env.get(var, "")
        if value:
            return "de" if value.lower().startswith("de") else "en"
    return "en"


class Translator:
    """Looks up catalogue texts in the current, switchable language."""

    def __init__(self, lang: str = "en") -> None:
        self.lang = lang if lang in LANGUAGES else "en"

    def set_language(self, lang: str) -> bool:
        """Switch language; False (and no change) for an unknown code."""
        if lang not in LANGUAGES:
            return False
        self.lang = lang
        return True

    def t(self, key: str, **fields: object) -> str:
        """The text for ``key`` in the current language, formatted with ``fields``."""
        pair = CATALOGUE.get(key)
        if pair is None:
            return key
        text = pair[0] if self.lang == "de" else pair[1]
        if fields:
            try:
                return text.format(**fields)
            except (KeyError, IndexError, ValueError):
                return text
        return text

    def seat(self, english_name: str) -> str:
        """A seat name from an engine (English) in the current language."""
        key = f"seat.{english_name}"
        return self.t(key) if key in CATALOGUE else english_name

    def game(self, name: str) -> str:
        """The name people use for a game."""
        key = f"game.{name}"
        return self.t(key) if key in CATALOGUE else name

    def help_lines(self) -> list[str]:
        """The /help text, one line per command group."""
        width = max(len(k) for k in HELP_LINES)
        return [f"{k.ljust(width)}  {v[0] if self.lang == 'de' else v[1]}" for k, v in HELP_LINES.items()]
