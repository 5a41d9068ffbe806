"""The stores: Aurora PostgreSQL behind RDS Proxy, its rotated secret, and the OpenSearch domain."""

from __future__ import annotations

from pathlib import Path

import pytest
from aws_cdk.assertions import Match
from aws_cdk.assertions import Template as CdkTemplate

from tests.infra.synth import CDK_CONTEXT, Template, engram_functions, only, resources, synthesize

pytestmark = pytest.mark.infra


@pytest.fixture(scope="module")
def resized(tmp_path_factory: pytest.TempPathFactory) -> Template:
    return synthesize(Path(tmp_path_factory.mktemp("cdk.out")), minAcu=0.5, maxAcu=8)


def _ingress_sources(template: Template, group: str) -> set[str]:
    """The security groups admitted into `group` (by logical id)."""
    return {rule["SourceSecurityGroupId"]["Fn::GetAtt"][0]
            for rule in resources(template, "AWS::EC2::SecurityGroupIngress").values()
            if rule["GroupId"] == {"Fn::GetAtt": [group, "GroupId"]} and "SourceSecurityGroupId" in rule}


def _functions_group(template: Template) -> str:
    _, props = engram_functions(template)["api"]
    return str(props["VpcConfig"]["SecurityGroupIds"][0]["Fn::GetAtt"][0])


def test_the_database_is_an_encrypted_deletion_protected_aurora_postgresql_16_cluster(
        assertions: CdkTemplate) -> None:
    assertions.resource_count_is("AWS::RDS::DBCluster", 1)
    assertions.has_resource_properties("AWS::RDS::DBCluster", {
        "Engine": "aurora-postgresql", "EngineVersion": Match.string_like_regexp(r"^16\."),
        "StorageEncrypted": True, "DeletionProtection": True, "BackupRetentionPeriod": Match.any_value(),
    })
    assertions.has_resource("AWS::RDS::DBCluster", {"DeletionPolicy": "Snapshot"})
    assertions.has_resource_properties("AWS::RDS::DBInstance", {
        "Engine": "aurora-postgresql", "DBInstanceClass": "db.serverless", "PubliclyAccessible": False})


def test_serverless_v2_capacity_comes_from_the_cdk_context(template: Template) -> None:
    _, cluster = only(template, "AWS::RDS::DBCluster")
    assert cluster["ServerlessV2ScalingConfiguration"] == {
        "MinCapacity": CDK_CONTEXT["minAcu"], "MaxCapacity": CDK_CONTEXT["maxAcu"]}


def test_passing_min_and_max_acu_in_the_context_resizes_the_cluster(resized: Template) -> None:
    _, cluster = only(resized, "AWS::RDS::DBCluster")
    assert cluster["ServerlessV2ScalingConfiguration"] == {"MinCapacity": 0.5, "MaxCapacity": 8}


def test_the_master_credentials_live_in_secrets_manager_and_rotate_from_inside_the_vpc(template: Template) -> None:
    secret, _ = only(template, "AWS::SecretsManager::Secret")
    attachment, _ = only(template, "AWS::SecretsManager::SecretTargetAttachment")
    _, cluster = only(template, "AWS::RDS::DBCluster")
    assert {"Ref": secret} in cluster["MasterUserPassword"]["Fn::Join"][1]
    _, rotation = only(template, "AWS::SecretsManager::RotationSchedule")
    assert rotation["SecretId"] == {"Ref": attachment}
    assert rotation["RotationRules"]["ScheduleExpression"].startswith("rate(")
    hosted = rotation["HostedRotationLambda"]
    assert hosted["RotationType"] == "PostgreSQLSingleUser"
    # The cluster sits in isolated subnets: a rotation function outside the VPC could never reach it.
    assert hosted["VpcSubnetIds"] and hosted["VpcSecurityGroupIds"]
    cluster_group = cluster["VpcSecurityGroupIds"][0]["Fn::GetAtt"][0]
    assert hosted["VpcSecurityGroupIds"]["Fn::GetAtt"][0] in _ingress_sources(template, cluster_group)


def test_the_functions_reach_the_database_through_an_rds_proxy_that_requires_tls(template: Template) -> None:
    proxy, props = only(template, "AWS::RDS::DBProxy")
    attachment, _ = only(template, "AWS::SecretsManager::SecretTargetAttachment")
    cluster, _ = only(template, "AWS::RDS::DBCluster")
    assert props["RequireTLS"] is True and props["EngineFamily"] == "POSTGRESQL"
    assert [auth["SecretArn"] for auth in props["Auth"]] == [{"Ref": attachment}]
    _, target_group = only(template, "AWS::RDS::DBProxyTargetGroup")
    assert target_group["DBClusterIdentifiers"] == [{"Ref": cluster}]
    for _, function in engram_functions(template).values():
        assert function["Environment"]["Variables"]["ENGRAM_DATABASE_HOST"] == {"Fn::GetAtt": [proxy, "Endpoint"]}
    proxy_group = props["VpcSecurityGroupIds"][0]["Fn::GetAtt"][0]
    assert _functions_group(template) in _ingress_sources(template, proxy_group)


def test_the_search_domain_is_encrypted_https_only_and_inside_the_vpc(assertions: CdkTemplate) -> None:
    assertions.resource_count_is("AWS::OpenSearchService::Domain", 1)
    assertions.has_resource_properties("AWS::OpenSearchService::Domain", {
        "EncryptionAtRestOptions": {"Enabled": True}, "NodeToNodeEncryptionOptions": {"Enabled": True},
        "DomainEndpointOptions": Match.object_like({"EnforceHTTPS": True,
                                                    "TLSSecurityPolicy": Match.string_like_regexp("TLS-1-2")}),
        "VPCOptions": {"SubnetIds": Match.any_value(), "SecurityGroupIds": Match.any_value()},
    })


def test_only_the_functions_may_connect_to_the_search_domain(template: Template) -> None:
    _, domain = only(template, "AWS::OpenSearchService::Domain")
    [group] = [g["Fn::GetAtt"][0] for g in domain["VPCOptions"]["SecurityGroupIds"]]
    assert _ingress_sources(template, group) == {_functions_group(template)}
    ingress = [r for r in resources(template, "AWS::EC2::SecurityGroupIngress").values()
               if r["GroupId"] == {"Fn::GetAtt": [group, "GroupId"]}]
    assert [(r["FromPort"], r["ToPort"]) for r in ingress] == [(443, 443)]
