"""Schema: the SQL migrations applied at deploy time by a custom resource (a function in the VPC on
the engram layer, behind a CDK Provider). Its properties carry a hash of the migration files, so
every deploy that ships a new migration re-runs it; in prod they also carry the functions' roles to
map in OpenSearch, so a new role is mapped on the deploy that creates it.

The function's POWERTOOLS_SERVICE_NAME (`engram-schema-migrations`) can never name a functions/
folder (a hyphen is no Python package name), so the local runtime never takes it for an engram function.
"""

from __future__ import annotations

import hashlib

from aws_cdk import CustomResource, Duration
from aws_cdk import aws_ec2 as ec2
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from aws_cdk import custom_resources as cr
from constructs import Construct

from infra.config import Deployment, settings_environment
from infra.constructs.functions import LOG_RETENTION, REPO, RUNTIME, powertools_environment

MIGRATIONS = REPO / "shared" / "engram" / "migrations"
SERVICE_NAME = "engram-schema-migrations"
TIMEOUT = Duration.minutes(5)  # a paused cluster takes some seconds to resume on the first connection


def migrations_hash() -> str:
    """A digest of every migration file (name and content): it changes exactly when a migration does."""
    digest = hashlib.sha256()
    for path in sorted(MIGRATIONS.glob("*.sql")):
        digest.update(path.name.encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()


class Schema(Construct):
    def __init__(self, scope: Construct, id: str, *, vpc: ec2.IVpc, subnets: ec2.SubnetSelection,
                 layer: lambda_.ILayerVersion, deployment: Deployment, environment: dict[str, object]) -> None:
        super().__init__(scope, id)
        self.embedding_dim = deployment.embedding_dim
        self.security_group = ec2.SecurityGroup(self, "Sg", vpc=vpc, description="engram schema migrations")
        self.function = lambda_.Function(
            self, "Migrate", runtime=RUNTIME, architecture=lambda_.Architecture.ARM_64,
            handler="handler.on_event", code=lambda_.Code.from_asset(str(REPO / "infra" / "schema"), exclude=["__pycache__"]),
            layers=[layer], vpc=vpc, vpc_subnets=subnets, security_groups=[self.security_group],
            timeout=TIMEOUT, memory_size=512, tracing=lambda_.Tracing.ACTIVE,
            environment={**settings_environment(**environment), **powertools_environment(SERVICE_NAME,
                                                                                          deployment.log_level)},
            logging_format=lambda_.LoggingFormat.JSON,
            log_group=logs.LogGroup(self, "MigrateLogs", retention=LOG_RETENTION),
        )
        self._provider = cr.Provider(self, "Provider", on_event_handler=self.function,
                                     log_group=logs.LogGroup(self, "ProviderLogs", retention=LOG_RETENTION))

    @property
    def role(self) -> iam.IRole:
        assert self.function.role is not None
        return self.function.role

    def apply(self, *, after: list[Construct], search_roles: list[iam.IRole]) -> CustomResource:
        """The custom resource that runs the migrations, once `after` exists (the cluster's instances)."""
        resource = CustomResource(self, "Migrations", service_token=self._provider.service_token,
                                  resource_type="Custom::EngramSchema", properties={
                                      "MigrationsHash": migrations_hash(),
                                      "EmbeddingDim": str(self.embedding_dim),
                                      "SearchRoleArns": [role.role_arn for role in search_roles]})
        for dependency in after:
            resource.node.add_dependency(dependency)
        return resource
