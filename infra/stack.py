"""EngramStack: one construct per capability, wired together for the deployment's profile."""

from __future__ import annotations

from typing import Any

from aws_cdk import CfnOutput, Stack
from aws_cdk import aws_secretsmanager as sm
from constructs import Construct

from infra.config import Deployment
from infra.constructs.api import Api
from infra.constructs.database import Database
from infra.constructs.functions import Functions, engram_layer
from infra.constructs.network import Network
from infra.constructs.operations import Monitoring, Schedule
from infra.constructs.schema import Schema
from infra.constructs.search import Search
from infra.constructs.workflows import Workflows

ENRICHMENT_STARTERS = ("ingest", "api", "consolidate")
# Who touches the keyword index: the api (search, erase a user, health), query_step (the keyword brain),
# extract (the index step). Any of them may create the index on first use, so each may write.
INDEX_USERS = ("api", "query_step", "extract")


class EngramStack(Stack):
    def __init__(self, scope: Construct, id: str, *, deployment: Deployment, **kwargs: Any) -> None:
        super().__init__(scope, id, **kwargs)
        self.deployment = deployment
        network = Network(self, "Network", deployment=deployment)
        database = Database(self, "Database", vpc=network.vpc, subnets=network.data_subnets,
                            clients_sg=network.functions_sg, deployment=deployment)
        layer = engram_layer(self, "EngramLayer")
        stored = {"database_secret_arn": database.secret.secret_arn, "embedding_dim": deployment.embedding_dim}
        schema = Schema(self, "Schema", vpc=network.vpc, subnets=network.compute_subnets, layer=layer,
                        deployment=deployment, environment=stored)
        database.allow_from(schema.security_group, "schema migrations")
        network.allow_aws_apis(schema.security_group, "schema migrations to Secrets Manager")
        database.secret.grant_read(schema.function)
        search = Search(self, "Search", vpc=network.vpc, subnets=network.data_subnets,
                        clients_sg=network.functions_sg, master=schema.role) if deployment.prod else None
        anthropic_key = self._secret("AnthropicKey", deployment.anthropic_api_key_secret)
        openai_key = self._secret("OpenAIKey", deployment.openai_api_key_secret)
        functions = Functions(self, "Functions", vpc=network.vpc, subnets=network.compute_subnets,
                              security_group=network.functions_sg, layer=layer, deployment=deployment,
                              environment=self._settings(database, search, anthropic_key, openai_key))
        functions.grant_models(anthropic_key, openai_key)
        for fn in functions.by_name.values():
            database.secret.grant_read(fn)
        index_users = [functions[name] for name in INDEX_USERS] if search is not None else []
        for fn in index_users:
            assert search is not None
            search.domain.grant_read_write(fn)
        if search is not None:
            schema.function.add_environment("OPENSEARCH_URL", f"https://{search.domain.domain_endpoint}")
            search.domain.grant_read_write(schema.function)
            search.admit(schema.security_group, "schema migrations map the functions' roles")
        schema.apply(after=[database.cluster], search_roles=[fn.role for fn in index_users if fn.role is not None])
        workflows = Workflows(self, "Workflows", functions=functions.by_name, timeouts=functions.timeouts())
        self._grant_executions(functions, workflows)
        api = Api(self, "Endpoint", ingest=functions["ingest"], api=functions["api"], deployment=deployment)
        Schedule(self, "Schedule", consolidation=workflows.consolidation,
                 every_minutes=deployment.consolidation_every_minutes)
        monitoring = Monitoring(self, "Monitoring", alarm_email=deployment.alarm_email)
        monitoring.watch_api(api.http_api)
        monitoring.watch_state_machines({"enrichment": workflows.enrichment, "query": workflows.query,
                                         "consolidation": workflows.consolidation})
        monitoring.watch_functions(functions.by_name)
        monitoring.watch_database(database.cluster, deployment.capacity[1])
        if search is not None:
            monitoring.watch_search(search.domain)
        CfnOutput(self, "ApiUrl", value=api.url or "")
        CfnOutput(self, "Profile", value=deployment.profile)
        CfnOutput(self, "AlarmTopicArn", value=monitoring.topic.topic_arn)
        if hasattr(api, "user_pool"):
            CfnOutput(self, "UserPoolId", value=api.user_pool.user_pool_id)
            CfnOutput(self, "UserPoolClientId", value=api.user_pool_client.user_pool_client_id)

    def _secret(self, id: str, secret: str | None) -> sm.ISecret | None:
        """An existing secret the context names by ARN or by name (None: none named)."""
        if not secret:
            return None
        return (sm.Secret.from_secret_complete_arn(self, id, secret) if secret.startswith("arn:")
                else sm.Secret.from_secret_name_v2(self, id, secret))

    def _settings(self, database: Database, search: Search | None, anthropic_key: sm.ISecret | None,
                  openai_key: sm.ISecret | None) -> dict[str, object]:
        """The functions' engram settings (field names of engram.config.Settings)."""
        d = self.deployment
        settings: dict[str, object] = {
            "database_secret_arn": database.secret.secret_arn, "embedding_dim": d.embedding_dim,
            "embedder": "titan", "titan_model_id": d.titan_model, "llm": d.llm,
            "bedrock_model": d.bedrock_model, "bedrock_fast_model": d.bedrock_fast_model,
            "keyword_index": "opensearch" if search is not None else "postgres",
        }
        if database.host is not None:
            settings["database_host"] = database.host
        # Prepared statements where the functions reach the writer itself; RDS Proxy pins a session that prepares.
        settings["database_prepare"] = database.host is None
        if search is not None:
            settings["opensearch_url"] = f"https://{search.domain.domain_endpoint}"
        if anthropic_key is not None:
            settings["anthropic_api_key_secret_arn"] = anthropic_key.secret_arn
        if openai_key is not None:
            settings["openai_api_key_secret_arn"] = openai_key.secret_arn
        for name in ("openai_base_url", "openai_model"):
            if getattr(d, name):
                settings[name] = getattr(d, name)
        return settings

    @staticmethod
    def _grant_executions(functions: Functions, workflows: Workflows) -> None:
        # Only the functions that start executions learn the ARNs: a task function that knew its own state
        # machine's ARN would make a dependency cycle. Enrichment is started by ingest, and restarted for
        # stalled events by the sweep (api on demand, consolidate's plan step on the schedule).
        for name in ENRICHMENT_STARTERS:
            functions[name].add_environment("ENGRAM_ENRICHMENT_STATE_MACHINE_ARN",
                                            workflows.enrichment.state_machine_arn)
            workflows.enrichment.grant_start_execution(functions[name])
        functions["api"].add_environment("ENGRAM_QUERY_STATE_MACHINE_ARN", workflows.query.state_machine_arn)
        functions["api"].add_environment("ENGRAM_CONSOLIDATION_STATE_MACHINE_ARN",
                                         workflows.consolidation.state_machine_arn)
        workflows.query.grant_start_sync_execution(functions["api"])
        workflows.query.grant_start_execution(functions["api"])
        workflows.query.grant_execution(functions["api"], "states:DescribeExecution")  # polls async queries
        workflows.consolidation.grant_start_execution(functions["api"])
