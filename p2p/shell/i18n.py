"""Every text the shell shows, in German and English.

The catalogue maps a key to ``(german, english)``; ``Translator.t(key, **fields)`` formats
it in the current language.  Code, comments and docs stay English; only this table speaks
to the user.  A missing key shows as the key itself (visible in tests, never a crash).
"""

from __future__ import annotations

import os
import string
from collections.abc import Iterable, Mapping
from typing import Any

LANGUAGES: tuple[str, ...] = ("de", "en")

CATALOGUE: dict[str, tuple[str, str]] = {
    # -- frame titles and status -----------------------------------------------------
    "pane.lobby": ("Lobby ({count} online)", "Lobby ({count} online)"),
    "pane.lobby.offline": ("Lobby (offline)", "Lobby (offline)"),
    "pane.lobby.ns": ("Lobby {namespace} ({count} online)", "Lobby {namespace} ({count} online)"),
    "pane.chat": ("Chat", "Chat"),
    "pane.board": ("Brett", "Board"),
    "status.inviting": ("Einladung an {nicks} zu {game} · warte auf Antwort (/rounds)", "Invitation to {nicks} for {game} · waiting for an answer (/rounds)"),
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
    "status.reconnecting": ("verbinde neu … (getrennt seit {time})", "reconnecting … (offline for {time})"),
    "status.brokers": ("Broker {up}/{total} verbunden", "brokers {up}/{total} connected"),
    "result.win": ("{seat} gewinnt", "{seat} wins"),
    "result.wins": ("{seats} gewinnen", "{seats} win"),
    "result.draw": ("unentschieden", "a draw"),
    "result.ranking": ("Rangfolge {ranks}", "ranking {ranks}"),
    "result.rank": ("{rank}. {seat} {points:Punkt|Punkte}", "{rank}. {seat} {points:point|points}"),
    "result.out": ("(raus)", "(out)"),
    "lobby.empty": ("(niemand sonst da)", "(nobody else here)"),
    "lobby.offline": ("(nicht verbunden: /connect oder /local)", "(not connected: /connect or /local)"),
    "lobby.busy": ("spielt", "busy"),
    "lobby.free": ("frei", "free"),
    "lobby.you": ("du", "you"),
    "lobby.impostor": ("⚠ NICHT dein Freund {friend}!", "⚠ NOT your friend {friend}!"),
    "lobby.clock_ahead": ("Uhr {amount} {unit} vor", "clock {amount} {unit} ahead"),
    "lobby.clock_behind": ("Uhr {amount} {unit} nach", "clock {amount} {unit} behind"),
    "notice.clock_off.ahead": (
        "Die Uhr von {nick} geht etwa {amount} {unit} vor (gegenüber deiner): Runden mit {nick} starten oder laufen womöglich nicht, bis eine der beiden Uhren richtig gestellt ist.",
        "{nick}'s clock is about {amount} {unit} ahead of yours: rounds with {nick} may not start or may stall until one of the two clocks is set right.",
    ),
    "notice.clock_off.behind": (
        "Die Uhr von {nick} geht etwa {amount} {unit} nach (gegenüber deiner): Runden mit {nick} starten oder laufen womöglich nicht, bis eine der beiden Uhren richtig gestellt ist.",
        "{nick}'s clock is about {amount} {unit} behind yours: rounds with {nick} may not start or may stall until one of the two clocks is set right.",
    ),
    "notice.clock_far.ahead": (
        "Die Uhr von {nick} geht etwa {amount} {unit} vor (gegenüber deiner): zu weit, um {nick} in der Lobby zu sehen oder zu spielen. Eine von euch beiden Uhren muss gestellt werden.",
        "{nick}'s clock is about {amount} {unit} ahead of yours: too far off to see {nick} in the lobby or to play. One of the two clocks needs setting.",
    ),
    "notice.clock_far.behind": (
        "Die Uhr von {nick} geht etwa {amount} {unit} nach (gegenüber deiner): zu weit, um {nick} in der Lobby zu sehen oder zu spielen. Eine von euch beiden Uhren muss gestellt werden.",
        "{nick}'s clock is about {amount} {unit} behind yours: too far off to see {nick} in the lobby or to play. One of the two clocks needs setting.",
    ),
    "notice.other_session.watches": (
        "Dein Schlüssel ist auch in einer anderen Sitzung online (anderes Fenster oder anderer Rechner), und die spielt: Dieses Fenster schaut nur zu. /takeover, um hier zu spielen.",
        "Your key is also online in another window or session (or on another machine), and that one plays: this window only watches. /takeover to play here.",
    ),
    "notice.other_session.plays": (
        "Dein Schlüssel ist auch in einer anderen Sitzung online (anderes Fenster oder anderer Rechner): Dieses Fenster spielt weiter, das andere schaut zu.",
        "Your key is also online in another window or session (or on another machine): this window keeps playing, the other one watches.",
    ),
    "notice.other_session_took_over": (
        "Deine andere Sitzung hat übernommen: Dieses Fenster schaut jetzt nur zu (/takeover holt es zurück).",
        "Your other session took over: this window only watches now (/takeover takes it back).",
    ),
    "notice.other_session_gone": (
        "Deine andere Sitzung ist weg: Dieses Fenster spielt jetzt für dich.",
        "Your other session has gone: this window plays for you now.",
    ),
    "notice.broker_no_retained": (
        "Dieser Broker speichert keine Nachrichten (retained): Diese langsame Runde geht nur weiter, solange ihr gleichzeitig online seid (nichts geht verloren; mit einem Broker, der sie speichert, könnt ihr zu verschiedenen Zeiten ziehen).",
        "This broker keeps no retained messages: this slow round goes on only while its players are online together (nothing is lost; a broker that keeps them lets you take turns at different times).",
    ),
    "notice.broker_too_large": (
        "Der Broker {broker} nimmt Nachrichten nur bis {limit} Bytes: {what} ({size} Bytes) ging über ihn nicht hinaus. Sie bleibt in deinem Protokoll, nichts verzweigt sich; für das, was sie braucht, nimm einen Broker, der größere Nachrichten annimmt (--broker).",
        "The broker {broker} takes messages of at most {limit} bytes: {what} ({size} bytes) could not go through it. It stays in your log and nothing forks; for what needs it, use a broker that takes larger messages (--broker).",
    ),
    "notice.broker_too_large.store": ("der Speicher der langsamen Runde", "the slow round's store"),
    "notice.broker_too_large.round": ("eine Nachricht der Runde", "a message of the round"),
    "notice.broker_too_large.lobby": ("eine Nachricht der Lobby", "a lobby message"),
    "notice.took_over": (
        "Du spielst jetzt in diesem Fenster; deine andere Sitzung schaut zu.",
        "You play in this window now; your other session watches.",
    ),
    "session.alone": (
        "Dein Schlüssel ist nirgends sonst online: Dieses Fenster spielt schon.",
        "Your key is online nowhere else: this window already plays.",
    ),
    "friend.added": ("{nick} ({fp}) ist jetzt als Freund gemerkt.", "{nick} ({fp}) is now marked as a friend."),
    "friend.removed": ("{nick} ({fp}) ist kein Freund mehr.", "{nick} ({fp}) is no longer a friend."),
    "friend.unknown": ("{nick} ist kein gemerkter Freund.", "{nick} is not a marked friend."),
    "friend.none": ("Noch keine Freunde gemerkt (/friend NAME).", "No friends marked yet (/friend NICK)."),
    "friend.online": ("ist da", "online"),
    "friend.offline": ("nicht da", "away"),
    "friend.save_failed": ("Freundesliste nicht gespeichert: {reason}", "Friends not saved: {reason}"),
    "friend.impostor": (
        "Warnung: {nick} ({fp}) trägt den Namen deines Freundes {friend}, hat aber einen anderen Schlüssel (dein Freund: {friend_fp}).",
        "Warning: {nick} ({fp}) uses the name of your friend {friend} but has another key (your friend: {friend_fp}).",
    ),
    "board.none": (
        "Kein Spiel.\n\nLokal spielen:\n{plays}\n\nOnline:\n /invite NICK SPIEL\n /private SPIEL\n /join CODE",
        "No game.\n\nPlay locally:\n{plays}\n\nOnline:\n /invite NICK GAME\n /private GAME\n /join CODE",
    ),
    "board.preview": ("Vorschau {pillar}: Ebene {level}", "Preview {pillar}: level {level}"),
    "board.level": ("Ebene {level}", "level {level}"),
    "board.last": ("Letzter Zug: {move}", "Last move: {move}"),
    "board.out": ("raus: {seats}", "out: {seats}"),
    "board.points": ("Punkte: {points}", "Points: {points}"),
    "board.check": ("+ Schach: {seats}", "+ check: {seats}"),
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
    "level.neuling": ("Neuling", "beginner"),
    "level.einfach": ("einfach", "easy"),
    "level.normal": ("normal", "normal"),
    "level.stark": ("stark", "strong"),
    "level.meister": ("Meister", "master"),
    "nick.default": ("gast", "guest"),
    "piece.letters": (" BSLTDKU", " PNBRQKD"),
    "piece.owners": ("rbgü", "rbyg"),
    "piece.1": ("Bauer", "pawn"),
    "piece.2": ("Springer", "knight"),
    "piece.3": ("Läufer", "bishop"),
    "piece.4": ("Turm", "rook"),
    "piece.5": ("Dame", "queen"),
    "piece.6": ("König", "king"),
    "piece.7": ("umgewandelte Dame", "promoted queen"),
    "board.legend": (
        "K König D Dame T Turm L Läufer S Springer B Bauer\nU umgewandelte Dame (zieht wie D, 1 Punkt)",
        "K king Q queen R rook B bishop N knight P pawn\nD promoted queen (moves like Q, worth 1 point)",
    ),
    "cube.scored": (
        "{seat}: {count:neue Viererreihe|neue Viererreihen}, jetzt {total:Punkt|Punkte}.",
        "{seat}: {count:new line|new lines} of four, now {total:point|points}.",
    ),
    "c4.double": ("Doppelvierer: {seat} schließt {count} Reihen auf einmal.", "Double four: {seat} completes {count} lines at once."),
    "c4.both": ("Vierer für beide Seiten auf einmal.", "Fours for both sides at once."),
    "chess.check": ("{seat} steht im Schach (durch {by}).", "{seat} is in check (from {by})."),
    "chess.mated": ("{by} setzt {seat} matt – {seat} ist raus.", "{by} checkmates {seat} – {seat} is out."),
    "chess.stalemated": ("{seat} ist patt und raus.", "{seat} is stalemated and out."),
    "chess.kingcap": ("{by} schlägt den König von {seat} – {seat} ist raus.", "{by} captures the king of {seat} – {seat} is out."),
    "chess.promoted": (
        "{seat}: Bauer auf {square} wird zur Dame (U: zieht wie eine Dame, zählt geschlagen nur 1 Punkt).",
        "{seat}: the pawn on {square} becomes a queen (D: moves like a queen, worth only 1 point when captured).",
    ),
    "chess.points": ("{seat}: {delta:Punkt|Punkte} ({why}), jetzt {total}.", "{seat}: {delta:point|points} ({why}), now {total}."),
    "chess.why.capture": ("Schlagen", "capture"),
    "chess.why.mate": ("Matt", "checkmate"),
    "chess.why.check": ("Schach gegen mehrere Könige", "check on several kings"),
    "chess.why.stalemate": ("Patt", "stalemate"),
    "reason.unknown": ("das geht gerade nicht (Details in shell.log)", "not possible now (details in shell.log)"),
    "reason.untranslated": ("das geht gerade nicht: {detail}", "{detail}"),
    "reason.see_log": ("Grund in shell.log", "reason in shell.log"),
    "reason.refused": ("Verbindung abgelehnt", "connection refused"),
    "reason.no_host": ("Rechnername unbekannt", "unknown host name"),
    "reason.timeout": ("keine Antwort", "no answer"),
    "reason.bot_missing": ("der Computerspieler kam nicht hoch", "the computer player did not come up"),
    "reason.busy": ("du bist schon in einer Runde: erst /leave", "you are already in a round: /leave first"),
    "reason.bad_turn_limit": ("ein Zeitlimit pro Zug ist 1 min bis 30 Tage", "a turn limit is 1 min to 30 days"),
    "reason.code_unknown": ("keine offene Runde mit diesem Code", "no open round behind that code"),
    "reason.broker_no_retained": ("dieser Broker speichert keine Nachrichten (retained): Beitreten mit Code geht hier nicht (lass dich mit Namen einladen)", "this broker keeps no retained messages: joining by code does not work here (ask to be invited by name)"),
    "reason.code_closed": ("die Runde hat schon begonnen", "the round has already started"),
    "reason.no_invitation": ("keine offene Einladung (abgelaufen oder zurückgezogen)", "no open invitation (expired or withdrawn)"),
    "reason.invitation_expired": ("die Einladung ist abgelaufen", "the invitation has expired"),
    "reason.still_running": ("die Runde läuft noch", "the round is still running"),
    "reason.closed": ("die Verbindung ist geschlossen", "the connection is closed"),
    "reason.not_your_turn": ("du bist nicht am Zug", "it is not your turn"),
    "reason.no_takeback": ("niemand bittet darum, den letzten Zug zurückzunehmen",
                           "nobody asks to take back the last move"),
    "reason.other_session": (
        "dein Schlüssel spielt in einer anderen Sitzung; dieses Fenster schaut zu (/takeover, um hier zu spielen)",
        "your key plays in another session; this window watches (/takeover to play here)",
    ),
    "reason.not_in_play": ("die Runde läuft nicht", "the round is not in play"),
    "reason.no_seat_here": ("du hast keinen Platz in dieser Runde", "you hold no seat in this round"),
    "reason.only_admin": ("das darf nur, wer eingeladen hat", "only the inviting player may do that"),
    "reason.cancel_in_play": ("eine laufende Runde wird nicht abgesagt: /resign", "a round in play cannot be called off: /resign"),
    "reason.empty_chat": ("eine leere Chatzeile", "an empty chat line"),
    "reason.over": ("die Runde ist vorbei", "the round is over"),
    "reason.no_seat": ("es gibt keinen Platz {seat}", "there is no seat {seat}"),
    "reason.no_resign": ("in diesem Spiel gibt es kein Aufgeben", "this game has no resignation"),
    "reason.not_move": ("{text} ist kein Zug (so schreiben: h2-h4)", "{text} is not a move (write it like h2-h4)"),
    "reason.not_column": ("{text} ist keine Spalte (1–{max})", "{text} is not a column (1–{max})"),
    "reason.no_column": ("es gibt keine Spalte {column} (1–{max})", "there is no column {column} (1–{max})"),
    "reason.no_popout": ("{text}: Herausziehen gibt es nur bei Pop Out", "{text}: popping is only allowed in Pop Out"),
    "reason.pop_none": ("Spalte {column}: unten liegt kein Stein von dir", "column {column}: no stone of yours at the bottom to pop"),
    "reason.column_full": ("Spalte {column} ist voll", "column {column} is full"),
    "reason.not_pillar": ("{text} ist keine Säule (a1–d4)", "{text} is not a pillar (a1–d4)"),
    "reason.pillar_full": ("Säule {pillar} ist voll", "pillar {pillar} is full"),
    "reason.not_square": ("{square} ist kein Feld des Bretts", "{square} is not a square of the board"),
    "reason.same_square": ("ein Zug braucht zwei verschiedene Felder", "a move needs two different squares"),
    "reason.promote_queen": ("Bauern werden immer zur Dame (=D)", "pawns always promote to a queen (=D)"),
    "reason.no_piece": ("auf {square} steht keine Figur", "there is no piece on {square}"),
    "reason.grey_piece": ("die Figur auf {square} ist grau (ihr Spieler ist raus) und zieht nicht", "the piece on {square} is grey (its player is out) and cannot move"),
    "reason.other_piece": ("die Figur auf {square} gehört {owner}; am Zug ist {turn}", "the piece on {square} is {owner}'s; it is {turn}'s turn"),
    "reason.no_such_piece": ("auf {square} steht kein {piece}", "there is no {piece} on {square}"),
    "reason.castle_check": ("aus dem Schach heraus gibt es keine Rochade", "you cannot castle out of check"),
    "reason.castle_attacked": ("der König kann nicht über oder auf ein angegriffenes Feld rochieren", "the king cannot castle through or onto an attacked square"),
    "reason.self_check": ("{move} ließe deinen König im Schach", "{move} would leave your king in check"),
    "reason.own_piece": ("{piece} auf {square} kann nicht auf die eigene Figur auf {target}", "the {piece} on {square} cannot move onto your own piece on {target}"),
    "reason.cannot_reach": ("{piece} auf {square} kann nicht nach {target}", "the {piece} on {square} cannot move to {target}"),
    "reason.already_out": ("{seat} ist schon raus", "{seat} is already out"),
    "reason.option_int": ("Option {key} muss eine ganze Zahl sein", "option {key} must be a whole number"),
    "reason.option_range": ("Option {key} muss zwischen {lo} und {hi} liegen", "option {key} must be between {lo} and {hi}"),
    "reason.option_bool": ("Option {key} ist true oder false", "option {key} must be true or false"),
    "reason.option_unknown": ("unbekannte Option: {keys}", "unknown option: {keys}"),
    # -- messages ------------------------------------------------------------------------
    "msg.welcome": (
        "Willkommen bei p2p. /help zeigt die Befehle, /play connect4 startet ein Spiel.",
        "Welcome to p2p. /help lists the commands, /play connect4 starts a game.",
    ),
    "msg.local_mode": (
        "Ohne Broker: nur lokales Spiel. {plays_inline}",
        "No broker: local play only. {plays_inline}",
    ),
    "msg.unknown_command": ("Unbekannter Befehl: {name} (/help)", "Unknown command: {name} (/help)"),
    "msg.usage": ("Aufruf: {usage}", "Usage: {usage}"),
    "msg.no_game": ("Es läuft kein Spiel.", "No game is running."),
    "msg.no_game_move": (
        "Es läuft kein Spiel – {move} wurde weder gezogen noch in den Chat geschickt (/play, /invite).",
        "No game is running – {move} was neither played nor sent as chat (/play, /invite).",
    ),
    "msg.not_your_turn": ("Du bist nicht am Zug.", "It is not your turn."),
    "msg.computer_thinking": ("Der Computer denkt noch nach.", "The computer is still thinking."),
    "msg.too_fast": ("Zu schnell – Eingabe kurz gesperrt.", "Too fast – input briefly locked."),
    "msg.bad_move": ("Ungültiger Zug {move}: {reason}", "Invalid move {move}: {reason}"),
    "net.again_running": (
        "Die Runde läuft noch: erst zu Ende spielen, /aufgeben oder /verlassen, dann /again.",
        "The round is still running: play it out, /resign or /leave first, then /again.",
    ),
    "msg.no_resign": (
        "In {game} gibt es kein Aufgeben; /nochmal beginnt eine neue Runde.",
        "{game} has no resignation; /again starts a new round.",
    ),
    "msg.game_over": ("Die Runde ist vorbei. /again für eine neue Runde.", "The round is over. /again for another round."),
    "msg.round_over": ("Runde {round} vorbei: {result}. Stand {score}. /again · /replay", "Round {round} over: {result}. Score {score}. /again · /replay"),
    "msg.round_over.analyze": ("Runde {round} vorbei: {result}. Stand {score}. /again · /replay · /analyze", "Round {round} over: {result}. Score {score}. /again · /replay · /analyze"),
    "msg.new_round": ("Runde {round}: {game}, es beginnt {seat}.", "Round {round}: {game}, {seat} starts."),
    "msg.unknown_game": ("Unbekanntes Spiel {name} ({known}).", "Unknown game {name} ({known})."),
    "msg.bad_option": ("Ungültige Option: {reason}", "Invalid option: {reason}"),
    "msg.unknown_level": ("Unbekannte Stufe {level} (möglich: {levels}).", "Unknown level {level} (possible: {levels})."),
    "msg.no_computer": ("Für {game} gibt es (noch) keinen Computerspieler.", "There is no computer player for {game} (yet)."),
    "msg.level_set": ("Computerstufe für {game}: {level}", "Computer level for {game}: {level}"),
    "msg.levels": ("Stufen für {game}: {levels} (jetzt: {level})", "Levels for {game}: {levels} (now: {level})"),
    "msg.undo": ("Zurückgenommen: {moves}", "Taken back: {moves}"),
    "msg.nothing_to_undo": ("Nichts zurückzunehmen.", "Nothing to take back."),
    "msg.undo_decided": ("Die Runde ist entschieden; kein Zurücknehmen mehr. /again", "The round is decided; no more take-backs. /again"),
    "msg.replay_needs_end": ("Wiedergabe erst nach dem Ende der Runde.", "Replay only after the round has ended."),
    "msg.replay_no_moves": ("Die Runde endete ohne einen Zug: es gibt nichts wiederzugeben.", "The round ended without a move: there is nothing to replay."),
    "msg.replay_help": ("Wiedergabe: /replay next · prev · start · end · stop", "Replay: /replay next · prev · start · end · stop"),
    "msg.replay_stopped": ("Wiedergabe beendet.", "Replay finished."),
    "msg.analysis_unavailable": ("Analyse gibt es nur für beendete Runden Vier in einer Reihe.", "Analysis exists only for finished Connect Four rounds."),
    "msg.analysis_running": ("Analysiere die Runde …", "Analysing the round …"),
    "msg.analysis_line": ("Zug {ply} {seat} {move}: {verdict}", "Move {ply} {seat} {move}: {verdict}"),
    "msg.analysis_failed": ("Analyse fehlgeschlagen: {reason}", "Analysis failed: {reason}"),
    "analysis.win": ("hält den Sieg", "keeps a win"),
    "analysis.draw": ("hält remis", "keeps a draw"),
    "analysis.loss": ("verliert", "loses"),
    "analysis.unknown": ("(unbekannt)", "(unknown)"),
    "analysis.est_win": ("gewinnt (Schätzung)", "wins (estimate)"),
    "analysis.est_loss": ("verliert (Schätzung)", "loses (estimate)"),
    "analysis.est_ahead": ("im Vorteil (Schätzung)", "ahead (estimate)"),
    "analysis.est_behind": ("im Nachteil (Schätzung)", "behind (estimate)"),
    "analysis.est_even": ("ausgeglichen (Schätzung)", "even (estimate)"),
    "analysis.mistake": ("Fehler, vorher: {was}", "mistake, before: {was}"),
    "analysis.probable_mistake": ("wohl ein Fehler, vorher: {was}", "probable mistake, before: {was}"),
    "analysis.decisive": ("entscheidender Zug", "decisive move"),
    "analysis.summary": ("Analyse fertig: {mistakes} Fehler.", "Analysis done: {mistakes} mistakes."),
    "analysis.summary_one": ("Analyse fertig: 1 Fehler.", "Analysis done: 1 mistake."),
    "analysis.summary_estimates_one": (
        "Analyse fertig: 1 Fehler, davon {estimated} geschätzt.",
        "Analysis done: 1 mistake, {estimated} of them estimated.",
    ),
    "analysis.summary_estimates": (
        "Analyse fertig: {mistakes} Fehler, davon {estimated} geschätzt.",
        "Analysis done: {mistakes} mistakes, {estimated} of them estimated.",
    ),
    "analysis.estimate_note": (
        "„Schätzung“: bevor der Löser rechnen kann, urteilt die stärkste Suche (Meister-Tiefe); sie kann sich irren.",
        "\"estimate\": before the solver can answer, the strongest search (master depth) judges; it can be wrong.",
    ),
    "msg.hint_unavailable": ("Für dieses Spiel gibt es keine Tipps (kein Computerspieler).", "This game has no hints (no computer player)."),
    "msg.hint_local_only": ("Tipps gibt es nur im lokalen Spiel.", "Hints are for local play only."),
    "msg.hint": ("Tipp: {move}", "Hint: {move}"),
    "msg.rules_none": ("Kein Spiel gewählt: /rules {known}", "No game chosen: /rules {known}"),
    "msg.nick_set": ("Dein Name ist jetzt {nick}.", "Your name is now {nick}."),
    "msg.nick_bad": ("Ein Name hat 1–20 Zeichen ohne Leerzeichen.", "A name has 1–20 characters without spaces."),
    "msg.lang_set": ("Sprache: Deutsch", "Language: English"),
    "msg.lang_bad": ("Sprachen: de, en", "Languages: de, en"),
    "msg.notify_on": ("Benachrichtigungen an.", "Notifications on."),
    "msg.notify_off": ("Benachrichtigungen aus.", "Notifications off."),
    "msg.namespace_is": (
        "Lobby-Namensraum: {namespace}. /namespace NAME wechselt (a-z, 0-9, '-'; public ist die Lobby für alle).",
        "Lobby namespace: {namespace}. /namespace NAME changes it (a-z, 0-9, '-'; public is everyone's lobby).",
    ),
    "msg.namespace_set": (
        "Lobby-Namensraum {namespace} gespeichert; nur wer denselben wählt, ist in deiner Lobby.",
        "Lobby namespace {namespace} saved; only those who choose the same one share your lobby.",
    ),
    "msg.namespace_bad": (
        "Ungültiger Namensraum {namespace}: 1–32 Zeichen aus a-z, 0-9 und '-', z. B. /namespace freunde-42",
        "Bad namespace {namespace}: 1-32 characters of a-z, 0-9 and '-', e.g. /namespace friends-42",
    ),
    "msg.namespace_busy": (
        "Die Runde läuft in diesem Namensraum: erst zu Ende spielen oder /leave.",
        "Your round runs in this namespace: play it out or /leave first.",
    ),
    "msg.broker_set": ("Broker gespeichert: {broker}. Wirkt beim nächsten Start (oder /connect).", "Broker saved: {broker}. Takes effect on next start (or /connect)."),
    "msg.broker_bad": (
        "Ungültige Broker-Adresse {url}: mqtt://, mqtts://, ws:// oder wss:// mit Rechnernamen, z. B. /broker mqtt://127.0.0.1:1883",
        "Bad broker address {url}: use mqtt://, mqtts://, ws:// or wss:// with a host, e.g. /broker mqtt://127.0.0.1:1883",
    ),
    "msg.settings_corrupt": ("Einstellungen unlesbar ({path}), nutze Standardwerte.", "Settings unreadable ({path}), using defaults."),
    "msg.settings_unsaved": ("Einstellungen nicht gespeichert: {reason}", "Settings not saved: {reason}"),
    "msg.chat_cut": (
        "Deine Zeile war zu lang: nur die ersten {sent} von {total} Zeichen gehen hinaus.",
        "Your line was too long: only the first {sent} of {total} characters go out.",
    ),
    "msg.chat_offline": ("(nicht verbunden – niemand liest mit)", "(not connected – nobody is reading)"),
    "msg.offline_command": ("Dafür braucht es eine Verbindung zum Broker.", "This needs a connection to a broker."),
    "msg.internal_error": ("Interner Fehler (Details im Log {path}).", "Internal error (details in the log {path})."),
    "msg.render_error": ("(Anzeigefehler – Details in shell.log)", "(display error – details in shell.log)"),
    "msg.you": ("du", "you"),
    "msg.computer": ("Computer", "computer"),
    "msg.stats": ("Statistik {game} gegen Computer {level}: {won} gewonnen, {lost} verloren, {drawn} unentschieden", "Stats {game} vs computer {level}: {won} won, {lost} lost, {drawn} drawn"),
    "msg.quit_confirm": (
        "Die Runde läuft noch. Beendest du jetzt, hast du {secs} s, um zurückzukommen (p2p neu starten), sonst verlierst du durch Zeitüberschreitung. Noch einmal /quit beendet, /leave verlässt die Runde.",
        "The round is still running. If you quit now you have {secs} s to come back (start p2p again) before you lose on time. /quit again quits, /leave leaves the round.",
    ),
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
    "net.privacy_many": (
        (
            "Hinweis: Die Broker {brokers} sind öffentlich. Die Lobby (dein Name, der Lobby-Chat) kann jeder lesen; "
            "Züge und Chat einer Runde sind Ende-zu-Ende verschlüsselt, doch wer wann mit wem spielt, sieht man. "
            "Ihre Betreiber sehen deine IP-Adresse."
        ),
        (
            "Note: the brokers {brokers} are public. Anyone can read the lobby (your nickname, lobby chat); "
            "a round's moves and chat are end-to-end encrypted, but who plays with whom and when is visible. "
            "Their operators see your IP address."
        ),
    ),
    "word.and": ("und", "and"),
    "net.key_damaged": (
        "Deine Schlüsseldatei {path} ist beschädigt oder leer; ohne sie geht es nicht online. "
        "Verschiebe sie (mv {path} {path}.alt) und starte neu: dann entsteht ein neuer Schlüssel "
        "(Freunde sehen einen neuen Fingerabdruck). Lokales Spiel geht weiter.",
        "Your key file {path} is damaged or empty; online play needs it. "
        "Move it away (mv {path} {path}.old) and start again: a new key is made "
        "(friends will see a new fingerprint). Local play still works.",
    ),
    "net.unreachable": (
        "Broker {broker} nicht erreichbar ({reason}). /local startet einen lokalen Broker mit Computergegner; sonst nur lokales Spiel.",
        "Broker {broker} cannot be reached ({reason}). /local starts a local broker with a computer opponent; otherwise local play only.",
    ),
    "net.session_broker": (
        "{brokers} gilt nur für diese Sitzung (/broker speichert Broker); Runden auf diesem Broker nimmt ein Neustart nur mit demselben --broker wieder auf.",
        "{brokers} is for this session only (/broker saves brokers); a restart resumes rounds on it only when started with the same --broker.",
    ),
    "net.connected": ("Verbunden mit {broker} als {nick} [{fp}].", "Connected to {broker} as {nick} [{fp}]."),
    "net.disconnected": ("Verbindung verloren – verbinde neu …", "Connection lost – reconnecting …"),
    "net.reconnected": ("Wieder verbunden.", "Reconnected."),
    "net.broker_down": ("Broker {broker} nicht erreichbar – es geht über die anderen weiter ({up}/{total}).", "Broker {broker} unreachable – carrying on over the others ({up}/{total})."),
    "net.broker_up": ("Broker {broker} wieder verbunden ({up}/{total}).", "Broker {broker} connected again ({up}/{total})."),
    "net.resynced": ("Runde abgeglichen ({count:Ereignis|Ereignisse}).", "Round resynchronised ({count:event|events})."),
    "net.local_starting": ("Starte lokalen Broker …", "Starting a local broker …"),
    "net.local_started": ("Lokaler Broker läuft auf {broker}; Computerspieler {bot} ist in der Lobby: /invite {bot} connect4", "Local broker running at {broker}; computer player {bot} is in the lobby: /invite {bot} connect4"),
    "net.local_failed": ("Lokaler Broker startet nicht: {reason}", "Local broker does not start: {reason}"),
    "net.unavailable": ("Online-Spiel ist in dieser Version noch nicht verfügbar (p2p.peer fehlt).", "Online play is not available in this build (p2p.peer missing)."),
    "net.joined": ("{nick} ist da.", "{nick} joined."),
    "net.left": ("{nick} ist weg.", "{nick} left."),
    "net.presence_hidden": (
        "… und {count:weiterer kam oder ging|weitere kamen oder gingen} (alle stehen in der Lobby).",
        "… and {count} more came or went (the lobby lists everyone).",
    ),
    "net.invite_sent": ("Einladung an {nicks} zu {game} gesendet (Runden-ID {code}).", "Invitation to {nicks} for {game} sent (round id {code})."),
    "net.invited": (">>> {nick} lädt dich zu {game} ein. <<<", ">>> {nick} invites you to {game}. <<<"),
    "net.invite_answer": ("    /accept oder /decline", "    /accept or /decline"),
    "net.invite_turn": ("    Langsame Runde: {limit} pro Zug (Züge warten auf dem Broker, ihr müsst nicht gleichzeitig online sein)", "    slow round: {limit} per turn (moves wait on the broker; you need not be online at the same time)"),
    "net.turn_bad": ("turn= braucht eine Dauer von 1 min bis 30 Tagen, z. B. turn=30m, turn=2h, turn=1d.", "turn= needs a duration from 1 min to 30 days, e.g. turn=30m, turn=2h, turn=1d."),
    "turn.days": ("{n:Tag|Tage}", "{n:day|days}"),
    "turn.hours": ("{n:Stunde|Stunden}", "{n:hour|hours}"),
    "turn.minutes": ("{n} min", "{n} min"),
    "turn.seconds": ("{n} s", "{n} s"),
    "net.invite_details": ("    Optionen: {options} · wer beginnt: {how}", "    options: {options} · starter: {how}"),
    "net.invite_details.plain": ("    wer beginnt: {how}", "    starter: {how}"),
    "net.invite_computers": (" · {count:Computerplatz|Computerplätze} ({levels})", " · {count:computer seat|computer seats} ({levels})"),
    "net.accepted": ("{nick} hat angenommen.", "{nick} accepted."),
    "net.declined": ("{nick} hat abgelehnt.", "{nick} declined."),
    "net.no_invite": ("Keine offene Einladung.", "No open invitation."),
    "net.nick_ambiguous": (
        "Mehrere in der Lobby heißen {nick} ({ids}); nenne einen mit dem Anfang seines Fingerabdrucks, z. B. {example}.",
        "Several in the lobby are called {nick} ({ids}); name one by the start of its fingerprint, e.g. {example}.",
    ),
    "net.invite_self": (
        "{nick} bist du selbst: lade jemand anderen aus der Lobby ein (allein: /play).",
        "{nick} is you: invite someone else from the lobby (to play alone: /play).",
    ),
    "net.unknown_nick": ("Niemand namens {nick} in der Lobby.", "Nobody called {nick} in the lobby."),
    "draw.title": ("Auslosung (Festlegung · Aufdeckung):", "Draw (commitment · reveal):"),
    "draw.entry": ("Festlegung {commit} · Aufdeckung {reveal}", "commitment {commit} · reveal {reveal}"),
    "draw.seed": ("Zufallswert {seed}", "seed {seed}"),
    "net.starter": ("Es beginnt {nick} ({how}).", "{nick} starts ({how})."),
    "net.starter.drawn": ("ausgelost", "drawn"),
    "net.starter.chosen": ("gewählt", "chosen"),
    "net.starter.named": ("{nick} (gewählt)", "{nick} (chosen)"),
    "net.seats_short": (
        "{game} mit diesen Optionen braucht {need} Plätze, genannt sind {have} (mit dir): ai={missing} setzt Computer dazu, oder lade mehr Leute ein.",
        "{game} with these options needs {need} seats, you named {have} (with you): add ai={missing} for computer seats, or invite more people.",
    ),
    "net.seats_many": (
        "{game} mit diesen Optionen hat nur {need} Plätze, genannt sind {have} (mit dir): lade weniger ein oder setze players= höher.",
        "{game} with these options has only {need} seats, you named {have} (with you): invite fewer, or raise players=.",
    ),
    "net.you_declined": ("Du hast die Einladung von {nick} zu {game} abgelehnt.", "You declined {nick}'s invitation to {game}."),
    "net.round_started": ("Runde {round} beginnt: {game} (Runden-ID {code}).", "Round {round} starts: {game} (round id {code})."),
    "net.moved": ("{nick}: {move}", "{nick}: {move}"),
    "net.resigned": ("{nick} gibt auf.", "{nick} resigns."),
    "net.left_round": ("{nick} hat die Runde verlassen.", "{nick} left the round."),
    "net.rejected": (
        "Warnung: ein ungültiges Ereignis von {who} wurde verworfen (Details in shell.log).",
        "Warning: an invalid event from {who} was refused (details in shell.log).",
    ),
    "net.unknown_signer": ("einem unbekannten Schlüssel ({id}…)", "an unknown key ({id}…)"),
    "net.equivocated": (
        "Warnung: {who} hat zwei verschiedene Ereignisse für dieselbe Stelle signiert.",
        "Warning: {who} signed two different events for the same place.",
    ),
    "net.error": ("Fehler: {reason}", "Error: {reason}"),
    "net.invite_options_bad": ("Keine Einladung gesendet – {game}: {reason}.", "No invitation sent – {game}: {reason}."),
    "net.autostart": (
        "Die Runde beginnt von selbst, sobald alle angenommen haben (Phase {phase}; Plätze: {seats}; offen: {waiting}).",
        "The round starts by itself once everyone has accepted (phase {phase}; seats: {seats}; open: {waiting}).",
    ),
    "net.starter_set": ("Wer die nächste Einladung beginnt: {who} (me/NICK/draw).", "Starter of the next invitation: {who} (me/NICK/draw)."),
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
    "net.join_again": (
        "Du bist dieser Runde schon beigetreten; sie beginnt, sobald alle Plätze besetzt sind.",
        "You already joined this round; it starts when every seat is taken.",
    ),
    "net.joining": ("Suche die Runde mit Code {code} …", "Looking for the round behind code {code} …"),
    "net.joined_round": (
        "Runde {game} mit Code {code} beigetreten; sie beginnt, sobald alle Plätze besetzt sind.",
        "Joined the {game} round behind code {code}; it starts once every seat is taken.",
    ),
    "net.busy": (
        "Du bist schon in einer Runde: erst /leave (langsame Runden, turn=1d, gehen daneben).",
        "You are already in a round: /leave first (slow rounds, turn=1d, go alongside).",
    ),
    "net.seed": ("Zufallswert der Runde (aus allen Aufdeckungen): {seed}", "Round seed (from all reveals): {seed}"),
    "net.round_over": ("Runde {round} vorbei: {result}. /again für eine neue Runde.", "Round {round} over: {result}. /again for another round."),
    "net.round_over_ranking_why": (
        "Runde {round} vorbei ({why}): {result}. /again für eine neue Runde.",
        "Round {round} over ({why}): {result}. /again for another round.",
    ),
    "net.round_over_why": ("Runde {round} vorbei: {result} ({why}). /again für eine neue Runde.", "Round {round} over: {result} ({why}). /again for another round."),
    "net.round_over_corrected": (
        "Berichtigt: Runde {round} endet anders als gemeldet: {result}.",
        "Corrected: round {round} ended otherwise than shown: {result}.",
    ),
    "end.resignation": ("Aufgabe", "resignation"),
    "end.left": ("verlassen", "left"),
    "end.forfeit": ("Zeitüberschreitung", "turn timeout"),
    "net.renamed": ("{old} heißt jetzt {nick}.", "{old} is now called {nick}."),
    "net.drawing": ("Alle Plätze besetzt; wer beginnt, wird ausgelost.", "All seats taken; drawing the starting player."),
    "net.expired": ("Die Einladung ist abgelaufen.", "The invitation expired."),
    "notice.cancelled.declined": ("{nick} hat abgelehnt; die Runde ist abgesagt.", "{nick} declined; the round is called off."),
    "notice.cancelled.busy": (
        "{nick} spielt gerade eine andere Runde (sein Programm hat die Einladung von selbst abgelehnt); die Runde ist abgesagt.",
        "{nick} is playing another round (their client declined by itself); the round is called off.",
    ),
    "notice.cancelled.left": ("{nick} ist vor dem Start gegangen; die Runde ist abgesagt.", "{nick} left before the start; the round is called off."),
    "notice.cancelled.expired": ("Nicht alle haben rechtzeitig angenommen; die Runde ist abgesagt.", "Not everyone accepted in time; the round is called off."),
    "notice.cancelled.no_commit": (
        "{nick} hat sich nicht rechtzeitig zur Auslosung festgelegt; die Runde ist abgesagt.",
        "{nick} did not commit to the draw in time; the round is called off.",
    ),
    "notice.cancelled.no_reveal": (
        "{nick} hat für die Auslosung nicht rechtzeitig aufgedeckt; die Runde ist abgesagt.",
        "{nick} did not reveal for the draw in time; the round is called off.",
    ),
    "notice.agreed": (
        "Alle Mitglieder haben das Ergebnis unterschrieben (Abschlussbestätigung).",
        "Every member signed the result (closing acknowledgement).",
    ),
    "notice.cancelled.abandoned": (
        "Wer am Zug ist und wer ihn aufgeben lassen dürfte, sind beide fort; die Runde ist beendet.",
        "The player to move and whoever may forfeit them are both gone; the round has ended.",
    ),
    "notice.goes_on": (
        "Die Runde geht doch weiter: wer aufgeben lassen darf, ist zurück.",
        "The round goes on after all: whoever may forfeit is back.",
    ),
    "notice.cancelled.void": (
        "Der Einladende hat zwei Ereignisse für eine Stelle signiert; die Runde ist ungültig.",
        "The inviting player signed two events for one position; the round is void.",
    ),
    "notice.event_ahead": (
        "Ein Ereignis ist {secs} s später datiert, als unsere Uhr zeigt; es wartet, bis sie so weit ist.",
        "An event is dated {secs} s ahead of our clock; it waits until our clock gets there.",
    ),
    "notice.forfeit_replaced": (
        "Der rechtzeitige Zug von {nick} kam nach einer Zeitüberschreitung an und gilt.",
        "{nick}'s move, made in time, arrived after a turn timeout and counts.",
    ),
    "notice.disputed.forfeit": (
        "Umstritten (Stelle {seq}): {by} hat {nick} wegen Zeitüberschreitung ausgeschlossen, doch "
        "{nick} beansprucht den eigenen Zug dort. Hier gilt der Ausschluss; 'p2p replay' nennt beide.",
        "Disputed (position {seq}): {by} put {nick} out on time, but {nick} claims its own move "
        "there. This client keeps the forfeit; 'p2p replay' names both claims.",
    ),
    "notice.disputed.move": (
        "Umstritten (Stelle {seq}): {by} hat {nick} wegen Zeitüberschreitung ausgeschlossen, doch "
        "{nick} beansprucht den eigenen Zug dort. Hier gilt der Zug; 'p2p replay' nennt beide.",
        "Disputed (position {seq}): {by} put {nick} out on time, but {nick} claims its own move "
        "there. This client keeps the move; 'p2p replay' names both claims.",
    ),
    "notice.other_version": (
        "{nick} nutzt Protokoll v{theirs}, dieser Client v{ours}: gemeinsam spielen geht erst, "
        "wenn einer von euch aktualisiert.",
        "{nick} runs protocol v{theirs}, this client v{ours}: you can play together once one of "
        "you updates.",
    ),
    "notice.cancelled.start_now": (
        "Der Gastgeber hat mit den Anwesenden begonnen; eine direkte Einladung folgt.",
        "The host started with who was there; a direct invitation follows.",
    ),
    "notice.cancelled.other": ("Die Runde ist abgesagt: {text}", "The round is called off: {text}"),
    "notice.invitation_cancelled.declined": (
        "Die Einladung ist zurückgezogen: ein anderer Eingeladener hat abgelehnt.",
        "The invitation was withdrawn: another invited player declined.",
    ),
    "notice.invitation_cancelled.left": (
        "Die Einladung ist zurückgezogen: ein anderer Eingeladener ist gegangen.",
        "The invitation was withdrawn: another invited player left.",
    ),
    "notice.invitation_cancelled.expired": ("Die Einladung ist abgelaufen.", "The invitation expired."),
    "notice.invitation_cancelled.other": ("Die Einladung ist zurückgezogen.", "The invitation was withdrawn."),
    "notice.forfeit_ahead": (
        "Warnung: die Zeitüberschreitung von {nick} ist {secs} s nach unserer Uhr datiert.",
        "Warning: the turn timeout of {nick} is dated {secs} s ahead of our clock.",
    ),
    "notice.forfeit_seen_online": (
        "Warnung: {nick} soll offline gewesen sein, war bei uns aber online.",
        "Warning: {nick} is said to have gone offline, but we saw them online.",
    ),
    "notice.forfeit_early": (
        "Warnung: die Zeitüberschreitung von {nick} kam nach unserer Uhr schon nach {secs} s (Regel: {limit} s).",
        "Warning: by our clock the turn timeout of {nick} came after {secs} s (the rule is {limit} s).",
    ),
    "notice.reveal_left_out": (
        "Warnung: die Auslosung ließ die Aufdeckung von {nick} weg, die wir erhalten hatten.",
        "Warning: the draw left out the reveal of {nick} that we had received.",
    ),
    "notice.draw_stalled": (
        "Der Einladende schließt die Auslosung seit langem nicht ab.",
        "The inviting player has not closed the draw for a long time.",
    ),
    "notice.drawing_seed": ("Alle Plätze besetzt; der Zufallswert der Computerzüge wird ausgelost.", "All seats taken; drawing the seed of the computer moves."),
    "notice.draw_left_out": (
        "Warnung: der Einladende ließ Beiträge zur Auslosung weg, die uns erreicht hatten ({seats}); die Auslosung geht so nicht weiter.",
        "Warning: the inviting player left out draw entries that had reached us ({seats}); the draw does not go ahead.",
    ),
    "notice.draw_cancelled_commits": (
        "Warnung: die Auslosung wurde abgebrochen, obwohl alle Festlegungen angekommen waren.",
        "Warning: the draw was called off although every commitment had arrived.",
    ),
    "notice.draw_cancelled_reveals": (
        "Warnung: die Auslosung wurde abgebrochen, nachdem alle Aufdeckungen angekommen waren (Beginn wäre gewesen: {nick}).",
        "Warning: the draw was called off after every reveal had arrived (the starter would have been: {nick}).",
    ),
    "notice.untranslated": ("Hinweis (nur englisch verfügbar): {text}", "{text}"),
    "net.forfeited": (
        "{nick} hat {secs} s nicht gezogen ({how}) und ist raus: Zeitüberschreitung.",
        "{nick} did not move for {secs} s ({how}) and is out: turn timeout.",
    ),
    "net.forfeited_you": (
        "Du hast {secs} s nicht gezogen ({how}) und bist raus: Zeitüberschreitung.",
        "You did not move for {secs} s ({how}) and are out: turn timeout.",
    ),
    "net.forfeited_host": (
        "{nick} hat {secs} s lang nicht für {computer} gezogen ({how}) und ist raus: Zeitüberschreitung.",
        "{nick} did not move for {computer} for {secs} s ({how}) and is out: turn timeout.",
    ),
    "net.forfeited_host_you": (
        "Du hast {secs} s lang nicht für {computer} gezogen ({how}) und bist raus: Zeitüberschreitung.",
        "You did not move for {computer} for {secs} s ({how}) and are out: turn timeout.",
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
    "move.no_piece_to": ("{piece}: kein Zug nach {square} möglich.", "No {piece} can move to {square}."),
    "move.select_first": (
        "Kein Zug nach {square}: erst eine eigene Figur wählen (ihr Feld tippen) oder von-nach tippen, z. B. h2-h4.",
        "No move to {square}: select one of your pieces first (type its square) or type from-to, e.g. h2-h4.",
    ),
    "move.selected": ("{piece} auf {square} gewählt – jetzt das Zielfeld tippen.", "Selected the {piece} on {square} – now type its target square."),
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
        "{nick} ist offline gegangen – ist {nick} am Zug, bleiben mindestens {secs} s zum Zurückkommen.",
        "{nick} went offline — once it is {nick}'s turn, {nick} has at least {secs} s to return.",
    ),
    "round.back": ("{nick} ist wieder da – die Runde geht weiter.", "{nick} is back — the round goes on."),
    "status.away": ("{nick} offline · raus in {secs} s", "{nick} offline · out in {secs} s"),
    "status.absent": ("{nick} nicht in der Runde · raus in {time}", "{nick} not in the round · out in {time}"),
    "status.host_away": (
        "{nick} (spielt für {computer}) offline · raus in {secs} s",
        "{nick} (plays for {computer}) offline · out in {secs} s",
    ),
    "status.host_absent": (
        "{nick} (spielt für {computer}) nicht in der Runde · raus in {time}",
        "{nick} (plays for {computer}) not in the round · out in {time}",
    ),
    "round.host_waiting": (
        "{computer} ist am Zug, aber {nick} spielt für ihn und ist offline: {nick} ist in {secs} s raus, falls {nick} nicht zurückkommt.",
        "{computer} is to move, but {nick}, who plays for it, is offline: {nick} is out in {secs} s unless {nick} returns.",
    ),
    "round.host_away": (
        "{nick} ist offline gegangen – {nick} spielt für {computer}, der am Zug ist: {nick} ist in {secs} s raus, falls {nick} nicht zurückkommt.",
        "{nick} went offline — {nick} plays for {computer}, which is to move: {nick} is out in {secs} s unless {nick} returns.",
    ),
    "round.absent": (
        "{nick} ist wieder online, aber nicht in dieser Runde: ohne Zug ist {nick} in {minutes} min raus. /leave beendet sie für dich.",
        "{nick} is online again but not in this round: without a move {nick} is out in {minutes} min. /leave ends it for you.",
    ),
    "round.absent_later": (
        "{nick} ist wieder online, aber nicht in dieser Runde: wenn {nick} am Zug ist, bleiben {minutes} min. /leave beendet sie für dich.",
        "{nick} is online again but not in this round: once it is {nick}'s turn, {nick} has {minutes} min. /leave ends it for you.",
    ),
    "round.resumed": (
        "{game} (Runden-ID {code}) aus dem Protokoll wieder aufgenommen ({moves:Zug|Züge}); gleiche mit den anderen ab …",
        "Resumed round of {game} (round id {code}) from its log ({moves:move|moves}); catching up with the others …",
    ),
    "round.resume_failed": ("Runde mit ID {code} nicht wieder aufgenommen: {reason}", "Round with id {code} not resumed: {reason}"),
    "round.history": ("Bisher: {moves}", "So far: {moves}"),
    "round.you_left": ("Du hast die Runde verlassen.", "You left the round."),
    "round.resigned": ("{nick} gibt auf.", "{nick} resigns."),
    "round.you_resign": ("Du gibst auf.", "You resign."),
    "play.start_bad": (
        "start=ich|computer|abwechselnd (me|computer|alternate)",
        "start=me|computer|alternate (ich|computer|abwechselnd)",
    ),
    "play.start_rule.me": ("Du beginnst jede Runde.", "You start every round."),
    "play.start_rule.computer": ("Der Computer beginnt jede Runde.", "The computer starts every round."),
    "play.start_rule.alternate": (
        "Du und der Computer beginnen abwechselnd (start=ich|computer ändert das).",
        "You and the computer take turns to start (start=me|computer changes that).",
    ),
    "takeback.not_last": (
        "Online lässt sich nur dein eigener letzter Zug zurücknehmen, solange niemand darauf gezogen hat.",
        "Online only your own last move can be taken back, and only until someone has answered it.",
    ),
    "takeback.once": ("Du hast in dieser Runde schon einmal um Rücknahme gebeten.", "You have already asked for a take-back in this round."),
    "takeback.asked": (
        "Bitte um Rücknahme von {move} gesendet; sie gilt, wenn {mover} (am Zug) zustimmt.",
        "Asked to take back {move}; it happens if {mover} (to move) agrees.",
    ),
    "takeback.request_other": (
        ">>> {nick} möchte den Zug {move} zurücknehmen; {mover} ist am Zug und entscheidet. <<<",
        ">>> {nick} asks to take back the move {move}; {mover} is to move and decides. <<<",
    ),
    "takeback.not_yours": (
        "Über die Rücknahme entscheidet {mover} (am Zug), nicht du.",
        "The take-back is for {mover} (to move) to answer, not you.",
    ),
    "takeback.request": (">>> {nick} möchte den Zug {move} zurücknehmen. /accept oder /decline <<<", ">>> {nick} asks to take back the move {move}. /accept or /decline <<<"),
    "takeback.declined": ("Rücknahme abgelehnt – {nick} erfährt es sofort.", "Take-back declined – {nick} is told at once."),
    "takeback.declined_mine": (
        "{nick} lehnt es ab, deinen Zug {move} zurückzunehmen; {nick} ist am Zug.",
        "{nick} declined to take back your move {move}; {nick} is to move.",
    ),
    "takeback.declined_other": (
        "{by} lehnt es ab, den Zug {move} von {nick} zurückzunehmen.",
        "{by} declined to take back {nick}'s move {move}.",
    ),
    "takeback.done": (
        "Der letzte Zug von {nick} ({move}) wurde zurückgenommen; {nick} ist wieder am Zug.",
        "{nick}'s last move ({move}) was taken back; {nick} moves again.",
    ),
    "takeback.lapsed": (
        "{nick} hat weitergespielt; deine Bitte um Rücknahme ist hinfällig.",
        "{nick} played on; your take-back request lapsed.",
    ),
    "takeback.done_mine": (
        "Dein letzter Zug ({move}) wurde zurückgenommen; du bist wieder am Zug.",
        "Your last move ({move}) was taken back; you move again.",
    ),
    "notify.takeback": ("{nick} bittet um Rücknahme", "{nick} asks for a take-back"),
    "net.start_now_hint": ("/start jetzt beginnt sofort mit allen, die schon da sind.", "/start now begins at once with everyone who is here."),
    "net.start_nobody": ("Noch ist niemand beigetreten – der Code gilt weiter.", "Nobody has joined yet – the code stays valid."),
    "net.start_now": (
        "Start mit {nicks}: {game} mit den Anwesenden, jede/r bekommt eine direkte Einladung (/accept).",
        "Starting with {nicks}: {game} with those who are here; each gets a direct invitation (/accept).",
    ),
    # -- many rounds at once (p2p/shell/online_rounds.py) ----------------------------------
    "rounds.none": ("Du bist in keiner Runde.", "You are in no round."),
    "rounds.title": ("Deine Runden (/rounds N zeigt eine):", "Your rounds (/rounds N shows one):"),
    "rounds.line": ("{game} mit {others} · {turn}", "{game} with {others} · {turn}"),
    "rounds.you": ("du bist am Zug", "your turn"),
    "rounds.other": ("{nick} ist am Zug", "{nick} to move"),
    "rounds.forming": ("wartet auf Mitspieler", "waiting for players"),
    "rounds.over": ("vorbei", "over"),
    "rounds.left": ("noch {time}", "{time} left"),
    "rounds.slow": ("{limit} pro Zug", "{limit} per turn"),
    "rounds.live": ("Live-Runde", "live"),
    "rounds.bad": ("Kein Eintrag {n} in /rounds: /rounds listet deine Runden.", "No entry {n} in /rounds: /rounds lists your rounds."),
    "rounds.shown": ("Auf dem Brett (/rounds {n}): {game} mit {others} · {turn}.", "On the board (/rounds {n}): {game} with {others} · {turn}."),
    "rounds.show_hint": ("    /rounds {n} zeigt sie.", "    /rounds {n} shows it."),
    "rounds.summary": (
        "Du hast {count:Runde|Runden}; am Zug bist du in {mine}. /rounds listet sie.",
        "You hold {count:round|rounds}; it is your turn in {mine}. /rounds lists them.",
    ),
    "rounds.your_turn": (
        ">>> Du bist am Zug in {game} mit {others}. /rounds {n} zeigt sie. <<<",
        ">>> Your turn in {game} with {others}. /rounds {n} shows it. <<<",
    ),
    "rounds.moved_away": (
        "{nicks} hat in {game} gezogen, während du weg warst.",
        "{nicks} moved in {game} while you were away.",
    ),
    "rounds.moved_away.many": (
        "{nicks} haben in {game} gezogen, während du weg warst.",
        "{nicks} moved in {game} while you were away.",
    ),
    "rounds.moved_away.turn": (
        ">>> {nicks} hat in {game} gezogen, während du weg warst – du bist am Zug. <<<",
        ">>> {nicks} moved in {game} while you were away — your turn. <<<",
    ),
    "rounds.moved_away.turn.many": (
        ">>> {nicks} haben in {game} gezogen, während du weg warst – du bist am Zug. <<<",
        ">>> {nicks} moved in {game} while you were away — your turn. <<<",
    ),
    # -- notifications ---------------------------------------------------------------------
    "notify.turn": ("Du bist am Zug", "Your turn"),
    "notify.invite": ("Einladung von {nick}", "Invitation from {nick}"),
}

HELP_LINES: tuple[tuple[tuple[str, str], tuple[str, str]], ...] = (
    # ((command column German, English), (meaning German, English))
    (("/play SPIEL [ai|2p] [STUFE]", "/play GAME [ai|2p] [LEVEL]"), ("lokal spielen ({games})", "play locally ({games})")),
    (("{moves}", "{moves}"), ("ein Zug (Ziffer allein spielt sofort)", "a move (a lone digit plays at once)")),
    (("/undo · /again · /resign", "/undo · /again · /resign"), ("zurücknehmen · neue Runde · aufgeben", "take back · another round · resign")),
    (("/replay [next|prev|end] · /analyze · /hint", "/replay [next|prev|end] · /analyze · /hint"), ("Wiedergabe · Analyse · Tipp", "replay · analysis · hint")),
    (("/level [STUFE] · /stats · /rules [SPIEL]", "/level [LEVEL] · /stats · /rules [GAME]"), ("Computerstufe · Statistik · Regeln", "computer level · stats · rules")),
    (("/invite NAME SPIEL · /accept · /decline · /cancel", "/invite NICK GAME · /accept · /decline · /cancel"), ("Einladungen", "invitations")),
    (("/private SPIEL [open=N] · /join CODE", "/private GAME [open=N] · /join CODE"), ("private Runde mit Beitrittscode · per Code beitreten", "private round behind a join code · join by code")),
    (("/rounds [N]", "/rounds [N]"), ("deine Runden · Runde N zeigen", "your rounds · show round N")),
    (("/start · /starter NAME|draw · /leave", "/start · /starter NICK|draw · /leave"), ("Runde starten · wer beginnt · verlassen", "start round · starter · leave")),
    (("/friend NAME · /unfriend NAME · /friends", "/friend NICK · /unfriend NICK · /friends"), ("Schlüssel als Freund merken · vergessen · auflisten", "mark a key as a friend · forget · list")),
    (("/local · /connect", "/local · /connect"), ("lokaler Broker mit Computer · neu verbinden", "local broker with computer · reconnect")),
    (("/nick NAME · /broker URL · /lang de|en · /notify on|off", "/nick NAME · /broker URL · /lang de|en · /notify on|off"), ("Einstellungen", "settings")),
    (("/namespace NAME", "/namespace NAME"), ("eigene Lobby für eine Gruppe (public: alle)", "a lobby of your own group (public: everyone)")),
    (("/help · /quit (Strg-Q)", "/help · /quit (Ctrl-Q)"), ("Hilfe · beenden", "help · quit")),
    (("TEXT", "TEXT"), ("Chat", "chat")),
)


def detect_language(environ: Mapping[str, str] | None = None) -> str:
    """``"de"`` when the locale says German, else ``"en"`` (LC_ALL, LC_MESSAGES, LANG, LANGUAGE)."""
    env = os.environ if environ is None else environ
    for var in ("LC_ALL", "LC_MESSAGES", "LANG", "LANGUAGE"):
        value = env.get(var, "")
        if value:
            return "de" if value.lower().startswith("de") else "en"
    return "en"


class _PluralFormatter(string.Formatter):
    """``str.format`` plus plurals: ``{count:event|events}`` gives "1 event", "2 events"
    (also for signed numbers as text, "+1 point"); every other spec as usual."""

    def format_field(self, value: Any, format_spec: str) -> str:
        if "|" in format_spec:
            one, many = format_spec.split("|", 1)
            try:
                n = int(str(value))
            except ValueError:
                return f"{value} {many}"
            return f"{value} {one if abs(n) == 1 else many}"
        return super().format_field(value, format_spec)


_FORMATTER = _PluralFormatter()


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

    def t(self, key: str, /, **fields: object) -> str:
        """The text for ``key`` in the current language, formatted with ``fields``."""
        pair = CATALOGUE.get(key)
        if pair is None:
            from p2p.shell.game_view import game_text

            pair = game_text(key)
            if pair is None:
                return key
        text = pair[0] if self.lang == "de" else pair[1]
        if "{games" in text or "{plays" in text:
            fields = {**self._registry_fields(", "), **fields}
        if fields:
            try:
                return _FORMATTER.format(text, **fields)
            except (KeyError, IndexError, ValueError):
                return text
        return text

    def seat(self, english_name: str) -> str:
        """A seat name from an engine (English) in the current language."""
        key = f"seat.{english_name}"
        return self.t(key) if self.has(key) else english_name

    def has(self, key: str) -> bool:
        """True if ``key`` has a text: in the catalogue or in a registered game's view."""
        if key in CATALOGUE:
            return True
        from p2p.shell.game_view import game_text

        return game_text(key) is not None

    @staticmethod
    def _registry_fields(sep: str) -> dict[str, str]:
        """``{games}`` and ``{plays}`` in a text: the registered games, so that a new game
        appears in the help, the idle board and the usage lines with no edit here."""
        from p2p.games import game_names

        names = game_names()
        return {
            "games": sep.join(names),
            "plays": "\n".join(f" /play {n}" for n in names),
            "plays_inline": " · ".join(f"/play {n}" for n in names),
        }

    def game(self, name: str) -> str:
        """The name people use for a game (its registry entry's title)."""
        from p2p.games import spec

        try:
            return self.pick(spec(name).title)
        except KeyError:
            return name

    def pick(self, pair: tuple[str, str]) -> str:
        """The current language's half of a ``(german, english)`` pair."""
        return pair[0] if self.lang == "de" else pair[1]

    def help_lines(self) -> list[tuple[str, str]]:
        """The /help text: (command, meaning) per command group."""
        from p2p.shell.game_view import move_help

        fields = {**self._registry_fields(", "), "moves": self.pick(move_help())}
        return [
            (self.pick(keys).format(**fields), self.pick(text).format(**fields))
            for keys, text in HELP_LINES
        ]

    def level(self, level: str) -> str:
        """A computer level's name in the current language (the id is the wire name)."""
        key = f"level.{level}"
        return self.t(key) if self.has(key) else level

    def levels(self, levels: Iterable[str]) -> str:
        return ", ".join(self.level(lv) for lv in levels)

    def reason(self, err: BaseException) -> str:
        """An engine's ``CodedError`` in the current language (English text as fallback)."""
        code = getattr(err, "code", "")
        params = dict(getattr(err, "params", {}) or {})
        key = f"reason.{code}"
        if not code or not self.has(key):
            # no German text for this reason: say the English one rather than hide it
            detail = str(err)
            return self.t("reason.untranslated", detail=detail) if detail else self.t("reason.unknown")
        if isinstance(params.get("piece"), int):
            params["piece"] = self.t(f"piece.{params['piece']}")
        for name in ("owner", "turn", "seat"):
            if isinstance(params.get(name), str):
                params[name] = self.seat(str(params[name]))
        return self.t(key, **params)
