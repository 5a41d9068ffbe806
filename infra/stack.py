"""EngramStack: one construct per capability, wired together."""

from __future__ import annotations

from aws_cdk import CfnOutput, Stack
from constructs import Construct

from infra.constructs.api import Api
from infra.constructs.database import Database
from infra.constructs.functions import BEDROCK_MODELS, Functions
from infra.constructs.network import Network
from infra.constructs.operations import Monitoring, Schedule
from infra.constructs.search import Search
from infra.constructs.workflows import Workflows

ENRICHMENT_STARTERS = ("ingest", "api", "consolidate")


class EngramStack(Stack):
    def __init__(self, scope: Construct, id: str, **kwargs: object) -> None:
        super().__init__(scope, id, **kwargs)  # type: ignore[arg-type]
        ctx = self.node.try_get_context
        network = Network(self, "Network")
        database = Database(self, "Database", vpc=network.vpc, subnets=network.data_subnets,
                            clients_sg=network.functions_sg, min_acu=float(ctx("minAcu") or 0),
                            max_acu=float(ctx("maxAcu") or 4))
        search = Search(self, "Search", vpc=network.vpc, subnets=network.data_subnets, clients_sg=network.functions_sg)
        functions = Functions(self, "Functions", vpc=network.vpc, subnets=network.compute_subnets,
                              security_group=network.functions_sg, environment={
                                  "ENGRAM_DATABASE_SECRET_ARN": database.secret.secret_arn,
                                  "ENGRAM_DATABASE_HOST": database.proxy.endpoint,
                                  "OPENSEARCH_URL": f"https://{search.domain.domain_endpoint}",
                                  "ENGRAM_EMBEDDER": "titan", "ENGRAM_EMBEDDING_DIM": "1024", "ENGRAM_LLM": "bedrock",
                                  **BEDROCK_MODELS,
                              })
        functions.grant_models()
        workflows = Workflows(self, "Workflows", functions=functions.by_name)
        machines = {"enrichment": workflows.enrichment, "query": workflows.query,
                    "consolidation": workflows.consolidation}
        for fn in functions.by_name.values():
            database.secret.grant_read(fn)
            search.domain.grant_read_write(fn)
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
        api = Api(self, "Endpoint", ingest=functions["ingest"], api=functions["api"],
                  jwt_issuer=ctx("jwtIssuer"), jwt_audience=ctx("jwtAudience"))
        Schedule(self, "Schedule", consolidation=workflows.consolidation,
                 every_minutes=int(ctx("consolidationEveryMinutes") or 60))
        Monitoring(self, "Monitoring", state_machines=machines, functions=functions.by_name)
        CfnOutput(self, "ApiUrl", value=api.url or "")
