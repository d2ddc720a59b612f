"""Mount the admin API (/admin) and, when present, the inspector (/ui) into the HTTP app."""

from __future__ import annotations

import logging
from typing import Any


log = logging.getLogger("recall.admin")


def mount_operator_routes(app: Any, runtime: Any, *, public_url: str | None = None) -> None:
    if not runtime.storage.capabilities.admin:
        log.warning("storage %s has no admin capability: /admin and /ui are not served",
                    runtime.storage.description)
        return
    from .admin_api import mount_admin
    from ..admin.service import AdminService

    admin = AdminService(runtime.service)
    runtime.admin = admin
    mount_admin(app, admin)

    from .inspector import mount_inspector

    runtime.inspector = mount_inspector(app, runtime, admin, public_url)
