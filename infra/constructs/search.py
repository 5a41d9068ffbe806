"""Search: an OpenSearch domain in the VPC for the keyword brain (encrypted, HTTPS only)."""

from __future__ import annotations

from aws_cdk import RemovalPolicy
from aws_cdk import aws_ec2 as ec2
from aws_cdk import aws_opensearchservice as opensearch
from constructs import Construct

DATA_NODE_TYPE = "t3.medium.search"
VOLUME_GB = 20


class Search(Construct):
    def __init__(self, scope: Construct, id: str, *, vpc: ec2.IVpc, subnets: ec2.SubnetSelection,
                 clients_sg: ec2.ISecurityGroup) -> None:
        super().__init__(scope, id)
        sg = ec2.SecurityGroup(self, "Sg", vpc=vpc, description="engram OpenSearch")
        sg.add_ingress_rule(clients_sg, ec2.Port.tcp(443), "engram functions")
        self.domain = opensearch.Domain(
            self, "Domain", version=opensearch.EngineVersion.OPENSEARCH_2_17,
            capacity=opensearch.CapacityConfig(data_nodes=1, data_node_instance_type=DATA_NODE_TYPE,
                                               multi_az_with_standby_enabled=False),
            ebs=opensearch.EbsOptions(volume_size=VOLUME_GB),
            vpc=vpc, vpc_subnets=[ec2.SubnetSelection(subnets=[vpc.select_subnets(
                subnet_group_name=subnets.subnet_group_name).subnets[0]])],
            security_groups=[sg], encryption_at_rest=opensearch.EncryptionAtRestOptions(enabled=True),
            node_to_node_encryption=True, enforce_https=True,
            logging=opensearch.LoggingOptions(slow_search_log_enabled=True, app_log_enabled=True,
                                              slow_index_log_enabled=True),
            removal_policy=RemovalPolicy.RETAIN,
        )
