"""Signed webhooks from the transactional outbox (issue 30).

- `payloads`: the events core writes, with the change they describe (ids and metadata only);
- `targets`: which URLs a subscription may point at (http/https, public addresses unless the
  operator allows private ones), checked when created and again at every connection;
- `signing`: Standard Webhooks headers, signed by the spec's own library, one signature per
  live secret (rotation);
- `sender`: one HTTP attempt (no redirects, a timeout, the response body read up to a cap);
- `deliverer`: the background loop that claims deliveries and sends them, each subscription
  on its own, with backoff, a retry limit and dead deliveries;
- `subscriptions`: the use cases behind the admin API, the CLI and the inspector, and the
  static subscriptions of `recall.toml`.
"""
