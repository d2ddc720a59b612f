"""Server configuration: CLI flags > environment (RECALL_*) > recall.toml > defaults.

Unknown keys are errors (extra="forbid"), so a typo in recall.toml stops start-up instead of
being silently ignored. Plugin tables (`[plugins.<name>]`) are validated later by the model
each plugin declares, see `plugin_settings`.
"""

from __future__ import annotations

import os
import tomllib
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict
from pydantic_settings.exceptions import SettingsError

from .errors import ConfigError
from .observability.tracing import TracingSettings

DEFAULT_DB_PATH = "recall.db"
LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Limits(_Section):
    max_text_bytes: int = Field(256 * 1024, ge=1)
    tool_timeout: float = Field(30.0, gt=0)
    page_cap: int = Field(50, ge=1)
    # search_memories' query, in characters: a question, not a document (a 1 MB query held
    # the shared event loop ~4 s). Longer ones are INVALID_PARAM naming this limit.
    max_query_chars: int = Field(4096, ge=1)
    # Open MCP sessions (the older, stateful handshake) per token; at the cap the one idle
    # longest is closed to make room. 4,000 open sessions grew the server ~33 KB each.
    sessions_per_token: int = Field(64, ge=1)
    # Seconds a session may sit unused before it is closed (a client that comes back later
    # starts a new one, as MCP clients do on 404).
    session_idle_timeout: float = Field(900.0, gt=0)


class WorkerSettings(_Section):
    concurrency: int = Field(2, ge=0)  # 0 = no background worker (e.g. a read-only replica)
    lease_seconds: float = Field(120.0, gt=0)
    max_attempts: int = Field(5, ge=1)
    # /health and `recall status` call a worker loop stuck when one iteration (a claim plus
    # its job) has run this long: far past any extraction's ceiling.
    stuck_after: float = Field(900.0, gt=0)
    poll_interval: float = Field(0.2, gt=0)
    retry_backoff: float = Field(1.0, ge=0)
    # Background work gives way to tool calls (recall_core/activity.py): a job starts once
    # calls have paused this long (0 = never wait) ...
    yield_pause: float = Field(0.02, ge=0)
    # ... or after waiting this long for such a pause, so a steady stream of calls slows
    # extraction down but never stops it.
    yield_max_wait: float = Field(1.0, ge=0)
    # The circuit breaker around extraction (jobs/breaker.py): after this many model-provider
    # failures in a row the worker stops claiming jobs (their attempts unspent) ...
    breaker_threshold: int = Field(3, ge=1)
    # ... and lets one job through as a probe after this many seconds, doubling up to
    # breaker_probe_max while the provider stays down.
    breaker_probe: float = Field(5.0, gt=0)
    breaker_probe_max: float = Field(300.0, gt=0)


class RetentionSettings(_Section):
    # Days a finished store keeps its text in the operations table (then only a SHA-256 of
    # it stays; see recall_core/retention.py and README "Data and privacy").
    operation_text_days: float = Field(7.0, ge=0)
    # Days an A2A task (its messages and artifacts) is kept after its last update.
    task_days: float = Field(30.0, ge=0)
    # How often the retention job runs (seconds; 0 = never).
    interval: float = Field(3600.0, ge=0)


class SearchSettings(_Section):
    # Measured on LoCoMo (bench/RESULTS.md): k=3 beats the textbook k=60 by 0.10 recall@10,
    # because a sharp fusion keeps the strong ranker's top hits on top.
    rrf_k: int = Field(3, ge=1)
    # Per ranker, before fusion (raised to the request's limit). 100 -> 50 changed LoCoMo
    # recall@10 by -0.005 (BM25) / -0.001 (hybrid) and made BM25 search at 100k memories
    # ~25% faster (fewer rows to read and score, cheaper full-text splits): bench/RESULTS.md.
    candidates: int = Field(50, ge=1)


class ConsolidationSettings(_Section):
    # Seconds one consolidate_memories call may spend clustering and merging (kept under
    # limits.tool_timeout); past it the call answers what it did with partial=true.
    time_budget: float = Field(20.0, gt=0)
    # Most memories one merge may take (clustering.py): bounds what one canonical memory
    # can replace even when many texts really are alike.
    max_group: int = Field(20, ge=2)


class TenantLimits(_Section):
    """Per namespace, so one tenant cannot starve the others (issue 28)."""

    # Tool calls per second per namespace (token bucket, FastMCP's rate limiter); 0 = off.
    # Generous on purpose: a bulk loader (500 stores, 20 at a time, in tests/test_durability)
    # must pass; it stops floods, and one tenant holds at most this share of the server.
    # `burst` calls may come at once.
    requests_per_second: float = Field(100.0, ge=0)
    burst: int = Field(1000, ge=1)
    # Store jobs one namespace may have waiting (store_memory / A2A answer QUEUE_FULL past
    # it); 0 = no limit. Admin imports are not counted against it.
    max_queued_jobs: int = Field(10_000, ge=0)


class DecaySettings(_Section):
    # seconds between runs of the decay job; 0 disables it. Env: RECALL_DECAY_JOB_INTERVAL.
    interval: float = Field(3600.0, ge=0)
    # per day; ln(2)/35: an untouched memory's importance halves in ~35 days, each access
    # divides the rate by 1 + access_count (recall_core/decay.py). Env: RECALL_DECAY_LAMBDA.
    rate: float = Field(0.0198, ge=0)


class OAuthSettings(_Section):
    """`[oauth]`: OAuth 2.1 for /mcp and /a2a (recall_core/server/oauth/). Static bearer
    tokens from `recall create-token` keep working in every mode."""

    # "off": static bearer tokens only (no OAuth hints anywhere); "external": also accept
    # JWTs from an OIDC issuer; "builtin": Recall's own authorization server.
    mode: Literal["off", "external", "builtin"] = "off"
    # This server's public MCP URL, e.g. "https://recall.example.com/mcp": the resource in
    # the protected-resource metadata and the default token audience (RFC 8707). Empty:
    # public_url + "/mcp" (public_url defaults to the listening address).
    resource_url: str = ""
    issuer: str = ""  # external: the OIDC issuer URL, exactly as the tokens' `iss`
    # external: the issuer's key set; empty: read from <issuer>/.well-known/openid-configuration
    jwks_uri: str = ""
    audience: str = ""  # external: the `aud` tokens must carry; empty: resource_url
    algorithm: str = "RS256"  # external: the JWS algorithm the issuer signs with
    namespace_claim: str = "sub"  # the claim whose value is the namespace
    agent_claim: str = ""  # optional claim naming the agent inside the namespace
    scopes_claim: str = "scope"  # a space-separated string or a list of scopes
    # builtin: the authorization server's issuer; empty: the resource URL without /mcp.
    issuer_url: str | None = None
    access_token_ttl_seconds: int = Field(3600, ge=5)
    # builtin: a refresh token's lifetime (each refresh rotates it); 0: no expiry.
    refresh_token_ttl_seconds: int = Field(30 * 24 * 3600, ge=0)
    # builtin: an authorization code's lifetime (single-use; RFC 6749 advises <= 10 min).
    code_ttl_seconds: int = Field(300, ge=1, le=600)

    @field_validator("resource_url", "issuer", "jwks_uri")
    @classmethod
    def _url_or_empty(cls, value: str) -> str:
        from urllib.parse import urlsplit

        value = value.strip()
        parts = urlsplit(value)
        if value and (parts.scheme not in ("http", "https") or not parts.hostname):
            raise ValueError(f"{value!r} is not an http(s) URL with a host")
        return value

    @field_validator("namespace_claim", "scopes_claim")
    @classmethod
    def _claim_named(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("a claim name is needed, e.g. \"sub\" or \"scope\"")
        return value.strip()


# Documented env names -> the nested names pydantic-settings reads (the nested name wins when
# both are set). Applied at the environment's precedence: above recall.toml, below CLI flags.
ENV_ALIASES = {"RECALL_DECAY_JOB_INTERVAL": "RECALL_DECAY__INTERVAL",
               "RECALL_DECAY_LAMBDA": "RECALL_DECAY__RATE"}


class WebhookSubscriptionConfig(_Section):
    """A static subscription (`[[webhooks.subscriptions]]`), synced into storage at start."""

    namespace: str = Field(min_length=1)
    url: str
    events: list[str] = Field(min_length=1)
    #: "whsec_..." (or a list of them, newest first, while a rotation overlaps)
    secret: str | list[str] | None = None
    #: the name of an environment variable holding the secret(s), space-separated
    secret_env: str | None = None
    include_text: bool = False


class WebhookSettings(_Section):
    """`[webhooks]` (recall_core/events): delivery of signed events from the outbox."""

    # true lets a subscription point at loopback/private/link-local addresses
    allow_private_targets: bool = False
    timeout: float = Field(10.0, gt=0)  # seconds for one attempt, connect to last byte
    max_attempts: int = Field(8, ge=1)  # then the delivery is dead (replayable)
    retry_base: float = Field(5.0, gt=0)  # backoff: base * 2**(attempt-1), jittered ...
    retry_max: float = Field(3600.0, gt=0)  # ... and capped
    concurrency: int = Field(16, ge=1)  # deliveries in flight (one per subscription)
    poll_interval: float = Field(0.5, gt=0)  # for events committed by other processes
    body_cap: int = Field(4096, ge=1)  # bytes of a receiver's answer read
    retention_days: float = Field(7.0, ge=0)  # delivered and dead deliveries kept this long
    subscriptions: list[WebhookSubscriptionConfig] = Field(default_factory=list)


class RecallConfig(BaseSettings):
    model_config = SettingsConfigDict(
        env_prefix="RECALL_", env_nested_delimiter="__", extra="forbid",
        populate_by_name=True,
    )

    db: str | None = None  # URL or path; RECALL_DB_URL / RECALL_DB_PATH map here
    host: str = "127.0.0.1"
    port: int = 8765
    transport: Literal["http", "stdio"] = "http"
    # Base URL clients use to reach this server (behind a reverse proxy); the A2A agent card
    # advertises it. Default: http://<host>:<port>.
    public_url: str | None = None
    # Host header values answered (every route); default: public_url's host, the bind
    # address and loopback names. ["*"] accepts any. Required for a wildcard bind without
    # public_url (recall_core/http.py).
    allowed_hosts: list[str] | None = None
    extractor: str = "auto"  # "auto": haiku when ANTHROPIC_API_KEY is set, else stub
    # ranker name -> RRF weight. Empty: every installed ranker at its default weight.
    rankers: dict[str, float] = Field(default_factory=dict)
    # middleware names to enable; None: every registered one.
    middleware: list[str] | None = None
    log_level: str = "INFO"  # DEBUG, INFO, WARNING, ERROR or CRITICAL (any case)
    log_format: Literal["text", "json"] = "text"  # json: one object per line (recall_core/logs.py)
    # Prometheus /metrics on its own listener (recall_core/metrics.py); off when unset.
    metrics_port: int | None = None
    metrics_host: str = "127.0.0.1"
    # Seconds SIGTERM waits for open requests before closing them (docker stop, systemd).
    shutdown_grace: float = Field(10.0, ge=0)
    # Server processes behind the one HTTP port (cli/supervisor.py); stdio is always one.
    # 1 (default): one process, as before; "auto": one per CPU this process may run on.
    workers: int | Literal["auto"] = 1
    limits: Limits = Field(default_factory=Limits)
    worker: WorkerSettings = Field(default_factory=WorkerSettings)
    search: SearchSettings = Field(default_factory=SearchSettings)
    decay: DecaySettings = Field(default_factory=DecaySettings)
    consolidation: ConsolidationSettings = Field(default_factory=ConsolidationSettings)
    tenants: TenantLimits = Field(default_factory=TenantLimits)
    retention: RetentionSettings = Field(default_factory=RetentionSettings)
    tracing: TracingSettings = Field(default_factory=TracingSettings)  # recall_core/tracing.py
    oauth: OAuthSettings = Field(default_factory=OAuthSettings)  # recall_core/server/oauth/
    webhooks: WebhookSettings = Field(default_factory=WebhookSettings)  # recall_core/events
    plugins: dict[str, dict[str, Any]] = Field(default_factory=dict)

    @field_validator("log_level")
    @classmethod
    def _known_level(cls, value: str) -> str:
        level = value.strip().upper()
        if level not in LOG_LEVELS:
            raise ValueError(f"{value!r} is not a log level; use one of {', '.join(LOG_LEVELS)}")
        return level

    @field_validator("public_url")
    @classmethod
    def _http_url(cls, value: str | None) -> str | None:
        if value is None:
            return None
        from urllib.parse import urlsplit

        parts = urlsplit(value.strip())
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"{value!r} is not an http(s) URL with a host; use the address "
                             f"clients reach Recall at, e.g. https://recall.example.org")
        return value.strip().rstrip("/")

    @field_validator("workers")
    @classmethod
    def _workers(cls, value: int | str) -> int | str:
        if value != "auto" and not 1 <= int(value) <= 64:
            raise ValueError(f"{value} worker processes: use 1..64, or \"auto\" for one per CPU")
        return value

    @field_validator("port", "metrics_port")
    @classmethod
    def _port_range(cls, value: int | None) -> int | None:
        if value is not None and not 0 <= value <= 65535:
            raise ValueError(f"{value} is not a TCP port; use 1..65535 (0 picks a free one)")
        return value

    @classmethod
    def settings_customise_sources(cls, settings_cls, init_settings, env_settings,
                                   dotenv_settings, file_secret_settings):
        toml = getattr(cls, "_toml_source", None)
        sources: list[PydanticBaseSettingsSource] = [init_settings, env_settings]
        if toml is not None:
            sources.append(toml(settings_cls))
        return tuple(sources)

    @property
    def db_url(self) -> str:
        return normalise_db_url(self.db or DEFAULT_DB_PATH)


def normalise_db_url(value: str) -> str:
    """A bare path means SQLite; anything with a scheme is passed to the storage plugin."""
    if "://" in value:
        return value
    if value == ":memory:":  # not a file named ":memory:" in the working directory
        return "sqlite:///:memory:"
    return f"sqlite:///{Path(value).expanduser().resolve()}"


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        with path.open("rb") as fh:
            return tomllib.load(fh)
    except FileNotFoundError:
        raise ConfigError(f"Config file {path} does not exist. Pass an existing file to --config.") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"Config file {path} is not valid TOML: {exc}. Fix the syntax and retry.") from None


def _format_validation(exc: ValidationError, origin: str) -> str:
    lines = []
    unknown = False
    for err in exc.errors():
        loc = ".".join(str(p) for p in err["loc"])
        if err["type"] == "extra_forbidden":
            unknown = True
            lines.append(f"unknown key {loc!r}")
        else:
            msg = err["msg"].removeprefix("Value error, ")
            lines.append(f"{loc}: {msg} (got {err.get('input')!r})" if "got" not in msg
                         and "is not" not in msg else f"{loc}: {msg}")
    allowed = ", ".join(k for k in RecallConfig.model_fields)
    return (f"Invalid configuration ({origin}): " + "; ".join(lines) + "."
            + (f" Known top-level keys: {allowed}." if unknown else ""))


def load_config(path: str | os.PathLike[str] | None = None, **overrides: Any) -> RecallConfig:
    """Build the config. `overrides` are CLI flags (None values are ignored)."""
    overrides = {k: v for k, v in overrides.items() if v is not None}
    # RECALL_DB_URL and RECALL_DB_PATH are the documented names; both mean `db`.
    env_db = os.environ.get("RECALL_DB_URL") or os.environ.get("RECALL_DB_PATH")
    if env_db and "db" not in overrides:
        overrides["db"] = env_db
    data: dict[str, Any] = {}
    origin = "defaults and environment"
    if path is not None:
        p = Path(path)
        data = _read_toml(p)
        origin = f"{p} and environment"

    from pydantic_settings import InitSettingsSource

    class _Config(RecallConfig):
        pass

    _Config._toml_source = staticmethod(lambda cls: InitSettingsSource(cls, init_kwargs=data))
    saved = {k: os.environ.pop(k) for k in ("RECALL_DB_URL", "RECALL_DB_PATH") if k in os.environ}
    aliased = [target for alias, target in ENV_ALIASES.items()
               if os.environ.get(alias, "").strip() and target not in os.environ]
    for alias, target in ENV_ALIASES.items():
        if target in aliased:
            os.environ[target] = os.environ[alias]
    try:
        cfg = _Config(**overrides)
        return RecallConfig.model_validate(cfg.model_dump())
    except ValidationError as exc:
        if aliased:
            origin += " (" + ", ".join(f"{a} is read as {t}" for a, t in ENV_ALIASES.items()
                                       if t in aliased) + ")"
        raise ConfigError(_format_validation(exc, origin)) from None
    except SettingsError as exc:
        raise ConfigError(f"Invalid RECALL_* environment variable: {exc}. Fix or unset it.") from None
    finally:
        for target in aliased:
            os.environ.pop(target, None)
        os.environ.update(saved)


def plugin_settings(config: RecallConfig, name: str, model: type | None) -> Any:
    """Validate `[plugins.<name>]` (plus RECALL_PLUGIN_<NAME>_<KEY> env vars) with `model`."""
    raw = dict(config.plugins.get(name, {}))
    prefix = f"RECALL_PLUGIN_{name.upper().replace('-', '_')}_"
    for key, val in os.environ.items():
        if key.startswith(prefix):
            raw[key[len(prefix):].lower()] = val
    if model is None:
        return raw
    try:
        return model.model_validate(raw)
    except ValidationError as exc:
        msgs = "; ".join(
            (f"unknown key {'.'.join(map(str, e['loc']))!r}" if e["type"] == "extra_forbidden"
             else f"{'.'.join(map(str, e['loc']))}: {e['msg']}") for e in exc.errors())
        known = ", ".join(getattr(model, "model_fields", {}))
        raise ConfigError(f"Invalid settings for plugin {name!r} ([plugins.{name}]): {msgs}. "
                          f"Known keys: {known}.") from None
