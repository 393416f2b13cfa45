"""Dashboards: the panel list that Grafana's JSON and the gateway's /ops page share."""
