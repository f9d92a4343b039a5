"""FakeTelegram: the Bot API stand-in, assembled from its concerns.

- state.py: what it remembers (users, chats, members, messages, calls, the queue) and StoredMessage/ApiCall;
- serialise.py: the wire format both ways;
- updates.py: the update queue (getUpdates, offsets and confirmation, webhooks);
- chats.py, messages.py, commands.py, callbacks.py: the Bot API methods, by what they act on;
- dispatch.py: method name -> handler, Telegram's envelope; injection.py: faults at the entry point;
- user_driver.py: what simulated users do and what tests read back.
"""

from __future__ import annotations

from bot.fake_telegram.injection import FaultInjection
from bot.fake_telegram.user_driver import UserDriver


class FakeTelegram(FaultInjection, UserDriver):
    """The Bot API state machine: users, chats, the update queue, every call received, faults."""
