"""Search (prod): an OpenSearch domain for the keyword brain, in the VPC's isolated subnets across two
zones, reachable only from the functions' security group, encrypted at rest and in transit, HTTPS with
TLS 1.2, and fine-grained access control with an IAM master (the deploy-time schema function, which
maps the functions' roles to an index-scoped OpenSearch role).

Why a managed domain and not a Serverless collection: the OpenSearch adapter erases a user with
`_delete_by_query` and reads its own writes with `refresh=wait_for`, neither of which Serverless
collections support; fine-grained access (index-level roles for each function) exists only on
domains; and a Serverless collection's floor (2 OCUs with standby replicas, about $350 a month)
buys less steady capacity than these nodes. The `small` profile has no OpenSearch at all.
"""

from __future__ import annotations

from aws_cdk import RemovalPolicy
from aws_cdk import aws_ec2 as ec2
from aws_cdk import aws_iam as iam
from aws_cdk import aws_opensearchservice as opensearch
from constructs import Construct

ENGINE = opensearch.EngineVersion.OPENSEARCH_2_17
DATA_NODES = 2  # one per zone; every index has one replica, so a zone can fail
DATA_NODE_TYPE = "r6g.large.search"  # 16 GiB: the index stays in the page cache
MASTER_NODES = 3  # dedicated managers, so a busy data node never stalls the cluster state
MASTER_NODE_TYPE = "m6g.large.search"
VOLUME_GB = 50


class Search(Construct):
    def __init__(self, scope: Construct, id: str, *, vpc: ec2.IVpc, subnets: ec2.SubnetSelection,
                 clients_sg: ec2.ISecurityGroup, master: iam.IRole) -> None:
        super().__init__(scope, id)
        self.security_group = ec2.SecurityGroup(self, "Sg", vpc=vpc, description="engram OpenSearch",
                                                allow_all_outbound=False)
        self.security_group.add_ingress_rule(clients_sg, ec2.Port.tcp(443), "engram functions")
        self.domain = opensearch.Domain(
            self, "Domain", version=ENGINE,
            capacity=opensearch.CapacityConfig(data_nodes=DATA_NODES, data_node_instance_type=DATA_NODE_TYPE,
                                               master_nodes=MASTER_NODES, master_node_instance_type=MASTER_NODE_TYPE,
                                               multi_az_with_standby_enabled=False),
            zone_awareness=opensearch.ZoneAwarenessConfig(enabled=True, availability_zone_count=DATA_NODES),
            ebs=opensearch.EbsOptions(volume_size=VOLUME_GB, volume_type=ec2.EbsDeviceVolumeType.GP3),
            vpc=vpc, vpc_subnets=[subnets], security_groups=[self.security_group],
            encryption_at_rest=opensearch.EncryptionAtRestOptions(enabled=True),
            node_to_node_encryption=True, enforce_https=True, tls_security_policy=opensearch.TLSSecurityPolicy.TLS_1_2,
            fine_grained_access_control=opensearch.AdvancedSecurityOptions(master_user_arn=master.role_arn),
            logging=opensearch.LoggingOptions(slow_search_log_enabled=True, app_log_enabled=True,
                                              slow_index_log_enabled=True),
            removal_policy=RemovalPolicy.RETAIN,
        )

    def admit(self, clients: ec2.ISecurityGroup, description: str) -> None:
        self.security_group.add_ingress_rule(clients, ec2.Port.tcp(443), description)
