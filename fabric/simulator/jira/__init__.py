"""A Jira-compatible fake: the REST API the Jira ticket backend uses, with injectable faults and Cloud's lagging
search, for tests and demos (``fabricctl simulate-jira``).

Public API: :class:`JiraState` and :class:`Fault` (``state.py``), :func:`create_jira_app` and :class:`JiraAuth`
(``app.py``), :func:`serve_jira` (``server.py``); the JQL it understands is in ``jql.py``.
"""

from fabric.simulator.jira.app import JiraAuth, create_jira_app, send_webhooks
from fabric.simulator.jira.server import RunningJira, serve_jira
from fabric.simulator.jira.state import Fault, JiraState
from fabric.simulator.jira.webhooks import WebhookSender, WebhookTarget

__all__ = ["Fault", "JiraAuth", "JiraState", "RunningJira", "WebhookSender", "WebhookTarget", "create_jira_app",
           "send_webhooks", "serve_jira"]
