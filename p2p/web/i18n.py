"""The browser face's texts in German and English: one catalogue, sent to the page.

The page gets the catalogue of its language in the ``hello`` message and formats every
line itself (``{name}`` fields); the server only picks keys.  The shell has its own
catalogue (``p2p.shell.i18n``); the faces share no module above ``p2p.peer``.

>>> Texts("de").t("ui.send"), Texts("en").t("ui.send")
('Senden', 'Send')
>>> Texts("en").t("msg.nick_set", nick="anna")
'You are now called anna.'
"""

from __future__ import annotations

CATALOGUE: dict[str, tuple[str, str]] = {
    # -- the page ---------------------------------------------------------------------------
    "ui.title": ("p2p – Brettspiele mit Freunden", "p2p – board games with friends"),
    "ui.conn.offline": ("offline", "offline"),
    "ui.conn.connecting": ("verbinde …", "connecting …"),
    "ui.conn.connected": ("verbunden", "connected"),
    "ui.conn.lost": ("Verbindung weg – verbinde neu …", "connection lost – reconnecting …"),
    "ui.page.reconnecting": ("Seite getrennt – verbinde neu …", "page disconnected – reconnecting …"),
    "ui.lobby": ("Lobby", "Lobby"),
    "ui.lobby.empty": ("Niemand sonst online.", "Nobody else online."),
    "ui.you": ("du", "you"),
    "ui.busy": ("spielt", "playing"),
    "ui.free": ("frei", "free"),
    "ui.friend": ("Freund", "friend"),
    "ui.befriend": ("★ merken", "★ friend"),
    "ui.unfriend": ("vergessen", "forget"),
    "ui.impostor": ("Vorsicht: nicht dein Freund {friend}", "careful: not your friend {friend}"),
    "ui.friends": ("Freunde", "Friends"),
    "ui.clock_ahead": ("Uhr {amount} {unit} vor", "clock {amount} {unit} ahead"),
    "ui.clock_behind": ("Uhr {amount} {unit} nach", "clock {amount} {unit} behind"),
    "ui.online": ("online", "online"),
    "ui.invitations": ("Einladungen", "Invitations"),
    "ui.invitation": ("{from} lädt dich ein: {game}", "{from} invites you: {game}"),
    "ui.accept": ("Annehmen", "Accept"),
    "ui.decline": ("Ablehnen", "Decline"),
    "ui.rounds": ("Deine Runden", "Your rounds"),
    "ui.rounds.none": ("Keine Runde.", "No rounds."),
    "ui.show": ("Zeigen", "Show"),
    "ui.turn.you": ("du bist am Zug", "your turn"),
    "ui.turn.other": ("{nick} ist am Zug", "{nick} to move"),
    "ui.turn.forming": ("wartet auf Mitspieler", "waiting for players"),
    "ui.turn.over": ("vorbei", "over"),
    "ui.slow": ("langsam ({limit} pro Zug)", "slow ({limit} per move)"),
    "ui.live": ("live", "live"),
    "ui.time_left": ("noch {time}", "{time} left"),
    "ui.chat": ("Chat", "Chat"),
    "ui.chat.lobby": ("Lobby", "Lobby"),
    "ui.chat.round": ("Runde", "Round"),
    "ui.chat.placeholder": ("Nachricht …", "Message …"),
    "ui.send": ("Senden", "Send"),
    "ui.settings": ("Einstellungen", "Settings"),
    "ui.nick": ("Spitzname", "Nickname"),
    "ui.lang": ("Sprache", "Language"),
    "ui.namespace": ("Namensraum (Lobby)", "Namespace (lobby)"),
    "ui.broker": ("Broker (leer: öffentliche)", "Brokers (empty: public ones)"),
    "ui.notifications": ("Benachrichtigen, wenn ich dran bin", "Notify me when it is my turn"),
    "ui.save": ("Speichern", "Save"),
    "ui.connect": ("Verbinden", "Connect"),
    "ui.local_broker": ("Lokal mit Computer (/local)", "Local with computer (/local)"),
    "ui.takeover": ("Hier spielen (andere Sitzung schaut zu)", "Play here (the other session watches)"),
    "ui.watching": ("Eine andere Sitzung deines Schlüssels spielt; diese schaut zu.",
                    "Another session of your key plays; this one watches."),
    "ui.new_round": ("Neue Runde", "New round"),
    "ui.invite": ("Einladen", "Invite"),
    "ui.invite.who": ("Wen (in der Lobby anhaken)", "Whom (tick in the lobby)"),
    "ui.private": ("Private Runde (Code)", "Private round (code)"),
    "ui.open_seats": ("Freie Plätze für den Code", "Seats for the code"),
    "ui.join": ("Beitreten", "Join"),
    "ui.join_title": ("Mit Code beitreten", "Join by code"),
    "ui.code": ("Code", "Code"),
    "ui.game": ("Spiel", "Game"),
    "ui.players": ("Spieler", "Players"),
    "ui.computers": ("Computerspieler", "Computer players"),
    "ui.level": ("Stufe", "Level"),
    "ui.starter": ("Wer beginnt", "Who starts"),
    "ui.starter.draw": ("auslosen", "draw"),
    "ui.starter.me": ("ich", "me"),
    "ui.size": ("Brettgröße", "Board size"),
    "ui.popout": ("Pop Out", "Pop Out"),
    "ui.turn_limit": ("Zeit pro Zug (leer: live; z. B. 1d, 2h, 30m)",
                      "Time per move (empty: live; e.g. 1d, 2h, 30m)"),
    "ui.local": ("Hier spielen (ohne Netz)", "Play here (no network)"),
    "ui.local.seat": ("Platz {n}", "Seat {n}"),
    "ui.local.person": ("Mensch", "person"),
    "ui.local.start": ("Los", "Start"),
    "ui.local.close": ("Schließen", "Close"),
    "ui.local.title": ("Hier: {game}", "Here: {game}"),
    "ui.undo": ("Zurücknehmen", "Take back"),
    "ui.hint": ("Tipp", "Hint"),
    "ui.takeback": ("Zug zurücknehmen (fragen)", "Ask to take back"),
    "ui.accept_takeback": ("Rücknahme erlauben", "Allow the take-back"),
    "ui.takeback_asked": ("{seat} möchte den letzten Zug zurücknehmen.", "{seat} asks to take back the last move."),
    "ui.resign": ("Aufgeben", "Resign"),
    "ui.leave": ("Verlassen", "Leave"),
    "ui.cancel": ("Absagen", "Call off"),
    "ui.start_now": ("Jetzt starten (mit den Beigetretenen)", "Start now (with those who joined)"),
    "ui.again": ("Noch eine Runde", "Another round"),
    "ui.replay": ("Nachspielen", "Replay"),
    "ui.replay.pos": ("Zug {ply} von {total}", "move {ply} of {total}"),
    "ui.replay.close": ("Zurück zum Spiel", "Back to the game"),
    "ui.analysis": ("Auswertung (Löser)", "Evaluation (solver)"),
    "ui.first": ("⏮", "⏮"),
    "ui.prev": ("◀", "◀"),
    "ui.next": ("▶", "▶"),
    "ui.last": ("⏭", "⏭"),
    "ui.round_no": ("Runde {n}", "Round {n}"),
    "ui.score": ("Stand", "Score"),
    "ui.moves": ("Züge", "Moves"),
    "ui.result.win": ("{seat} gewinnt", "{seat} wins"),
    "ui.result.wins": ("{seats} gewinnen", "{seats} win"),
    "ui.result.draw": ("Unentschieden", "Draw"),
    "ui.result.rank": ("{rank}. {seat} {points} Punkte", "{rank}. {seat} {points} points"),
    "ui.status.you": ("Du bist am Zug ({seat})", "Your turn ({seat})"),
    "ui.status.other": ("Am Zug: {seat}", "To move: {seat}"),
    "ui.status.over": ("Vorbei: {result}", "Over: {result}"),
    "ui.status.forming": ("Wartet auf Mitspieler", "Waiting for players"),
    "ui.status.code": ("Code für Freunde: {code}", "Code for friends: {code}"),
    "ui.status.thinking": ("{seat} denkt …", "{seat} is thinking …"),
    "ui.computer": ("Computer ({level})", "computer ({level})"),
    "ui.open": ("offen", "open"),
    "ui.out": ("raus", "out"),
    "ui.your_turn_title": ("Du bist dran – p2p", "Your move – p2p"),
    "ui.your_turn_body": ("{game}: du bist am Zug.", "{game}: it is your turn."),
    "ui.welcome": ("Wähle ein Spiel: hier am Gerät, oder lade jemanden aus der Lobby ein.",
                   "Pick a game: here on this device, or invite someone from the lobby."),
    "ui.legal": ("Mögliche Züge", "Legal moves"),
    "ui.move_input": ("Zug eingeben", "Type a move"),
    "ui.play": ("Ziehen", "Play"),
    "ui.log": ("Meldungen", "Messages"),
    "ui.menu": ("Menü", "Menu"),
    "ui.board": ("Brett", "Board"),
    "opt.width": ("Breite (Spalten)", "Width (columns)"),
    "opt.height": ("Höhe (Reihen)", "Height (rows)"),
    "opt.popout": ("Pop Out (eigenen Stein unten herausziehen)", "Pop Out (pull your own disc out at the bottom)"),
    "opt.players": ("Spieler", "Players"),
    "opt.move_limit": ("Zuglimit (0: keins)", "Move limit (0: none)"),
    "opt.show_legal": ("Mögliche Züge zeigen", "Show legal moves"),
    "opt.rotate_start": ("Beginner wechselt jede Runde", "The starter rotates each round"),
    # -- seats and levels -------------------------------------------------------------------
    "seat.Red": ("Rot", "Red"),
    "seat.Yellow": ("Gelb", "Yellow"),
    "seat.Blue": ("Blau", "Blue"),
    "seat.Green": ("Grün", "Green"),
    "level.neuling": ("Neuling", "beginner"),
    "level.einfach": ("einfach", "easy"),
    "level.normal": ("normal", "normal"),
    "level.stark": ("stark", "strong"),
    "level.meister": ("Meister", "master"),
    # -- lines from the server -------------------------------------------------------------
    "msg.hint": ("Tipp: {move}", "Hint: {move}"),
    "msg.nick_set": ("Du heißt jetzt {nick}.", "You are now called {nick}."),
    "msg.broker_set": ("Broker gespeichert: {broker} (gilt beim nächsten Verbinden).",
                       "Brokers saved: {broker} (used on the next connect)."),
    "msg.namespace_set": ("Namensraum: {namespace}", "Namespace: {namespace}"),
    "msg.friend_added": ("{nick} [{fp}] ist jetzt dein Freund.", "{nick} [{fp}] is now your friend."),
    "msg.friend_removed": ("{nick} [{fp}] ist kein Freund mehr.", "{nick} [{fp}] is no longer a friend."),
    "msg.invited": ("Einladung an {nicks}: {game}", "Invited {nicks}: {game}"),
    "msg.private_code": ("Private Runde {game} offen. Code: {code}", "Private round {game} open. Code: {code}"),
    "msg.joined": ("Beigetreten: {game}", "Joined: {game}"),
    "msg.accepted": ("Angenommen: {game}", "Accepted: {game}"),
    "msg.declined": ("Abgelehnt: {game}", "Declined: {game}"),
    "msg.takeback_asked": ("Rücknahme erbeten.", "Take-back asked."),
    "msg.left": ("Runde verlassen: {game}", "Left the round: {game}"),
    "msg.again": ("Neue Runde {game}: Einladung verschickt.", "New round of {game}: invitation sent."),
    "msg.invitation": ("{nick} lädt dich zu {game} ein.", "{nick} invites you to {game}."),
    "msg.moved_away": ("{nicks} hat gezogen ({game}), während du weg warst.",
                       "{nicks} moved in {game} while you were away."),
    "msg.over": ("Runde vorbei: {game}", "Round over: {game}"),
    "msg.started": ("Runde beginnt: {game}", "Round starts: {game}"),
    "msg.rejected": ("Abgewiesen: {reason}", "Refused: {reason}"),
    "msg.privacy": ("Öffentliche Broker ({brokers}): Lobby-Chat und Spitzname sind dort für alle sichtbar; "
                    "Runden sind verschlüsselt.",
                    "Public brokers ({brokers}): lobby chat and nickname are visible to anyone there; "
                    "rounds are encrypted."),
    "net.connected": ("Verbunden mit {broker} als {nick} [{fp}].", "Connected to {broker} as {nick} [{fp}]."),
    "net.unreachable": ("{broker} nicht erreichbar: {reason}. Tipp: lokal mit Computer spielen.",
                        "Cannot reach {broker}: {reason}. Tip: play locally with the computer."),
    "net.local_starting": ("Starte lokalen Broker mit Computerspieler …",
                           "Starting a local broker with a computer player …"),
    "net.local_failed": ("Lokaler Broker geht nicht: {reason}", "Local broker failed: {reason}"),
    "net.lost": ("Verbindung zum Broker verloren, verbinde neu …", "Connection to the broker lost, reconnecting …"),
    "net.reconnected": ("Wieder verbunden.", "Reconnected."),
    "net.connected_again": ("Verbunden.", "Connected."),
    "net.closed": ("Verbindung geschlossen.", "Connection closed."),
    "err.action": ("Unbekannte Aktion.", "Unknown action."),
    "err.field": ("Ungültige Angabe: {field}", "Invalid field: {field}"),
    "err.internal": ("Interner Fehler ({reason}), Details im Log.", "Internal error ({reason}), details in the log."),
    "err.reason": ("Geht nicht: {reason}", "Not possible: {reason}"),
    "err.offline": ("Nicht verbunden.", "Not connected."),
    "err.no_round": ("Diese Runde gibt es nicht.", "No such round."),
    "err.nick": ("Ein Spitzname hat 1–20 Zeichen ohne Leerzeichen.", "A nickname has 1–20 characters, no spaces."),
    "err.broker": ("Broker-Adresse geht nicht: {url}", "Unusable broker address: {url}"),
    "err.namespace": ("Namensraum {namespace}: 1–32 Zeichen a–z, 0–9, -", "Namespace {namespace}: 1–32 of a–z, 0–9, -"),
    "err.namespace_busy": ("Nicht mitten in einer Runde.", "Not in the middle of a round."),
    "err.settings": ("Einstellungen nicht gespeichert: {reason}", "Settings not saved: {reason}"),
    "err.empty_chat": ("Leere Nachricht.", "Empty message."),
    "err.unknown_peer": ("Niemand namens {who} online.", "Nobody called {who} online."),
    "err.game": ("Unbekanntes Spiel {game}.", "Unknown game {game}."),
    "err.level": ("Unbekannte Stufe {level}.", "Unknown level {level}."),
    "err.turn": ("Zeit pro Zug: 1 min bis 30 Tage (z. B. 1d, 2h, 30m).", "Time per move: 1 min to 30 days (e.g. 1d, 2h, 30m)."),
    "err.busy": ("Du bist schon in einer Live-Runde: erst verlassen.", "You are in a live round already: leave it first."),
    "err.nobody": ("Wen einladen? Hake jemanden in der Lobby an.", "Invite whom? Tick someone in the lobby."),
    "err.open": ("Freie Plätze: 1 bis 3.", "Open seats: 1 to 3."),
    "err.no_invitation": ("Keine offene Einladung (abgelaufen?).", "No open invitation (expired?)."),
    "err.over": ("Die Runde ist vorbei.", "The round is over."),
    "err.not_your_turn": ("Du bist nicht am Zug.", "It is not your turn."),
    "err.takeback_last": ("Zurücknehmen geht nur für deinen letzten Zug, bevor der Nächste zieht.",
                          "You can only take back your own last move, before the next one."),
    "err.still_running": ("Die Runde läuft noch.", "The round is still running."),
    "err.only_admin": ("Nur wer eingeladen hat, startet die nächste Runde.", "Only the inviting player starts the next round."),
    "err.no_analysis": ("Für dieses Spiel gibt es keine Auswertung.", "No evaluation for this game."),
    "err.no_local": ("Kein Spiel hier am Gerät.", "No game on this device."),
    "err.seats": ("Dieses Spiel braucht {need} Plätze.", "This game needs {need} seats."),
    "err.start_now": ("Nur wer eine private Runde eröffnet hat, startet sie vorzeitig.",
                      "Only the host of a private round can start it early."),
    "err.start_nobody": ("Noch ist niemand mit dem Code beigetreten.", "Nobody has entered the code yet."),
    "err.key": ("Schlüsseldatei beschädigt: {reason}", "Key file damaged: {reason}"),
    # -- reasons of the engines and the peer (codes; English text otherwise) -----------------
    "reason.not_your_turn": ("du bist nicht am Zug", "it is not your turn"),
    "reason.column_full": ("Spalte {column} ist voll", "column {column} is full"),
    "reason.pillar_full": ("Säule {pillar} ist voll", "pillar {pillar} is full"),
    "reason.busy": ("du bist schon in einer Runde", "you are already in a round"),
    "reason.code_unknown": ("keine offene Runde mit diesem Code", "no open round behind that code"),
    "reason.code_closed": ("die Runde hat schon begonnen", "the round has already started"),
    "reason.no_invitation": ("keine offene Einladung", "no open invitation"),
    "reason.still_running": ("die Runde läuft noch", "the round is still running"),
    "reason.over": ("die Runde ist vorbei", "the round is over"),
    "reason.locked": ("zu schnell (Doppeltipp)", "too fast (double tap)"),
    "reason.undo_none": ("nichts zurückzunehmen", "nothing to take back"),
    "reason.undo_over": ("die Runde ist entschieden", "the round is decided"),
}


class Texts:
    """The catalogue in one language."""

    def __init__(self, lang: str) -> None:
        self.lang = lang if lang in ("de", "en") else "en"

    def t(self, key: str, /, **fields: object) -> str:
        pair = CATALOGUE.get(key)
        if pair is None:
            return key
        text = pair[0] if self.lang == "de" else pair[1]
        try:
            return text.format(**fields) if fields else text
        except (KeyError, IndexError, ValueError):
            return text

    def catalogue(self) -> dict[str, str]:
        """Every text in this language, for the page."""
        index = 0 if self.lang == "de" else 1
        return {key: pair[index] for key, pair in CATALOGUE.items()}

    def reason(self, err: BaseException) -> str:
        """A refusal's reason: its code's text when the catalogue has one, else its own line."""
        code = getattr(err, "code", "")
        key = f"reason.{code}"
        if code and key in CATALOGUE:
            params = {k: v for k, v in dict(getattr(err, "params", {}) or {}).items()}
            return self.t(key, **params)
        return str(err).strip("'\"") or type(err).__name__
