"""Operating Mangagen: Prometheus metrics, health checks, request ids and structured logs.

- `metrics.py` defines every studio metric family (names as constants); the
  ledger defines its own (`ledger/metrics.py`).
- `collectors.py` reads shared state (Celery queues, the GPU pool) when
  Prometheus scrapes, in the web process that answers.
- `exposition.py` is `/metrics`: the counters and histograms of every process
  of the machine (prometheus_client's multiprocess mode) plus those gauges.
- `health.py` is `/healthz` and `/readyz`; `middleware.py` answers them before
  the host check and the HTTPS redirect, as an orchestrator's probe needs.
- `logs.py` is the log format (`LOG_FORMAT=json`) and the job/panel a log
  line is about; the request id comes from django-guid.
- `celery_metrics.py` counts Celery task outcomes; `postgresql/` is the
  PostgreSQL backend that times each wait for a database connection.
"""
