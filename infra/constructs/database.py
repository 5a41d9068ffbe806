"""Database: Aurora Serverless v2 PostgreSQL 16 (pgvector, pg_trgm), encrypted, behind RDS Proxy."""

from __future__ import annotations

from aws_cdk import Duration, RemovalPolicy
from aws_cdk import aws_ec2 as ec2
from aws_cdk import aws_rds as rds
from aws_cdk import aws_secretsmanager as sm
from constructs import Construct

DATABASE_NAME = "engram"
BACKUP_DAYS = 7
ROTATION_DAYS = 30
POSTGRES_PORT = 5432


class Database(Construct):
    def __init__(self, scope: Construct, id: str, *, vpc: ec2.IVpc, subnets: ec2.SubnetSelection,
                 clients_sg: ec2.ISecurityGroup, min_acu: float, max_acu: float) -> None:
        super().__init__(scope, id)
        self.cluster = rds.DatabaseCluster(
            self, "Cluster",
            engine=rds.DatabaseClusterEngine.aurora_postgres(version=rds.AuroraPostgresEngineVersion.VER_16_4),
            writer=rds.ClusterInstance.serverless_v2("Writer"),
            serverless_v2_min_capacity=min_acu, serverless_v2_max_capacity=max_acu,
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
        self.proxy = self.cluster.add_proxy("Proxy", secrets=[self.secret], vpc=vpc, vpc_subnets=subnets,
                                            require_tls=True, iam_auth=False)
        self.cluster.connections.allow_default_port_from(clients_sg, "engram functions")
        self.proxy.connections.allow_from(clients_sg, ec2.Port.tcp(POSTGRES_PORT), "engram functions")
