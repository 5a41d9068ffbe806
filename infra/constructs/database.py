"""Database: Aurora Serverless v2 PostgreSQL 16 (pgvector 0.8, pg_trgm), encrypted, TLS only, with its
credentials in Secrets Manager, rotated from inside the VPC.

`small`: one writer that pauses at 0 ACU when idle; the functions connect directly (reserved
concurrency bounds the connections, and a proxy's pinned connections would keep the cluster awake).
`prod`: a writer and a reader in another zone (failover), behind an RDS Proxy that requires TLS.
"""

from __future__ import annotations

from aws_cdk import Duration, RemovalPolicy
from aws_cdk import aws_ec2 as ec2
from aws_cdk import aws_rds as rds
from aws_cdk import aws_secretsmanager as sm
from constructs import Construct

from infra.config import Deployment

DATABASE_NAME = "engram"
# 16.6 and later ship pgvector 0.8 (hnsw.iterative_scan, which the store sets on every connection).
ENGINE = rds.DatabaseClusterEngine.aurora_postgres(version=rds.AuroraPostgresEngineVersion.VER_16_8)
POSTGRES_PORT = 5432
BACKUP_DAYS = 7
ROTATION_DAYS = 30
AUTO_PAUSE_AFTER = Duration.minutes(5)
PARAMETERS = {
    "rds.force_ssl": "1",
    # A warm Lambda keeps its pool's connection; closing idle sessions lets an idle cluster pause
    # (the pool checks a connection before lending it, so a closed one is replaced, not used).
    "idle_session_timeout": str(5 * 60 * 1000),
    "idle_in_transaction_session_timeout": str(60 * 1000),
    "log_min_duration_statement": "1000",  # statements slower than a second, in the postgresql log
}


class Database(Construct):
    def __init__(self, scope: Construct, id: str, *, vpc: ec2.IVpc, subnets: ec2.SubnetSelection,
                 clients_sg: ec2.ISecurityGroup, deployment: Deployment) -> None:
        super().__init__(scope, id)
        min_acu, max_acu = deployment.capacity
        self.cluster = rds.DatabaseCluster(
            self, "Cluster", engine=ENGINE,
            writer=rds.ClusterInstance.serverless_v2("Writer", publicly_accessible=False),
            readers=[rds.ClusterInstance.serverless_v2("Reader", scale_with_writer=True, publicly_accessible=False)]
            if deployment.prod else None,
            serverless_v2_min_capacity=min_acu, serverless_v2_max_capacity=max_acu,
            serverless_v2_auto_pause_duration=AUTO_PAUSE_AFTER if min_acu == 0 else None,
            parameter_group=rds.ParameterGroup(self, "Parameters", engine=ENGINE, parameters=PARAMETERS),
            vpc=vpc, vpc_subnets=subnets, credentials=rds.Credentials.from_generated_secret("engram"),
            default_database_name=DATABASE_NAME, storage_encrypted=True, iam_authentication=True,
            deletion_protection=True, backup=rds.BackupProps(retention=Duration.days(BACKUP_DAYS)),
            cloudwatch_logs_exports=["postgresql"], removal_policy=RemovalPolicy.SNAPSHOT,
        )
        assert self.cluster.secret is not None
        self.secret = self.cluster.secret
        # The rotation function must run in the VPC: the cluster lives in isolated subnets.
        rotation = sm.HostedRotation.postgre_sql_single_user(vpc=vpc, vpc_subnets=subnets)
        self.secret.add_rotation_schedule("Rotation", hosted_rotation=rotation,
                                          automatically_after=Duration.days(ROTATION_DAYS))
        self.cluster.connections.allow_default_port_from(rotation, "secret rotation")
        self.rotation = rotation
        self.proxy: rds.DatabaseProxy | None = None
        if deployment.prod:
            self.proxy = self.cluster.add_proxy("Proxy", secrets=[self.secret], vpc=vpc, vpc_subnets=subnets,
                                                require_tls=True, iam_auth=False)
            self.proxy.connections.allow_from(clients_sg, ec2.Port.tcp(POSTGRES_PORT), "engram functions")
        else:
            self.cluster.connections.allow_default_port_from(clients_sg, "engram functions")

    @property
    def host(self) -> str | None:
        """Where the functions connect: the proxy's endpoint in prod; None (the secret's host, the
        cluster's writer endpoint) in small."""
        return self.proxy.endpoint if self.proxy is not None else None

    def allow_from(self, clients: ec2.ISecurityGroup, description: str) -> None:
        """Admit a security group straight to the cluster (schema migrations bypass the proxy)."""
        self.cluster.connections.allow_default_port_from(clients, description)
