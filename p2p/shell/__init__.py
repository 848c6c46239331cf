"""The chat-and-play shell: a full-screen prompt_toolkit client (``p2p`` / ``p2p shell``).

Modules, each with one job:

* ``app`` - the Application: layout, keys, completion; reads state on every render.
* ``controller`` - executes input lines: chat, moves, commands; no prompt_toolkit.
* ``local_commands`` - local play: computer turns, undo, replay, hints, analysis.
* ``commands`` - the input grammar (pure): chat, a bare move, or a slash command.
* ``state`` - what the screen shows (chat lines, lobby), kept outside the widgets.
* ``local`` - a local match: seats, input lock, undo, replay (pure).
* ``online`` / ``connect`` - the connected ``p2p.peer.Peer``; connecting and ``/local``
  (``online_commands``, ``online_notes``, ``online_resume``: the parts an
  ``OnlineSession`` owns -- commands, notifications to lines, round files).
* ``game_view`` / ``views/`` - what differs per game (board, move input, notes, rules
  text), one view module per game found through the registry (``p2p/games/registry.py``);
  ``boards``, ``move_input``, ``move_notes`` - the shared parts and the dispatch.
* ``i18n`` / ``analysis_text`` - every text the user sees (de/en).
* ``settings`` - persisted settings; ``notify`` - bell and desktop notifications.
* ``bot`` - a computer player in the lobby; ``testing`` - the headless driver.
"""
