"""The stores: Aurora PostgreSQL 16 (direct in small, behind RDS Proxy in prod), its rotated secret, the
schema migrations custom resource, and the prod OpenSearch domain."""

from __future__ import annotations

import pytest
from aws_cdk.assertions import Match
from aws_cdk.assertions import Template as CdkTemplate

from infra.constructs.schema import SERVICE_NAME, migrations_hash
from tests.infra.synth import Template, engram_functions, environment, only, resources, role_of

pytestmark = pytest.mark.infra


def _ingress_sources(template: Template, group: str) -> set[str]:
    """The security groups admitted into `group` (by logical id)."""
    return {rule["SourceSecurityGroupId"]["Fn::GetAtt"][0]
            for rule in resources(template, "AWS::EC2::SecurityGroupIngress").values()
            if rule["GroupId"] == {"Fn::GetAtt": [group, "GroupId"]} and "SourceSecurityGroupId" in rule}


def _functions_group(template: Template) -> str:
    _, props = engram_functions(template)["api"]
    return str(props["VpcConfig"]["SecurityGroupIds"][0]["Fn::GetAtt"][0])


def _cluster_group(template: Template) -> str:
    _, cluster = only(template, "AWS::RDS::DBCluster")
    return str(cluster["VpcSecurityGroupIds"][0]["Fn::GetAtt"][0])


def _schema(template: Template) -> tuple[str, dict]:
    [found] = [(logical, props) for logical, props in resources(template, "AWS::Lambda::Function").items()
               if props.get("Environment", {}).get("Variables", {}).get("POWERTOOLS_SERVICE_NAME") == SERVICE_NAME]
    return found


def test_the_database_is_an_encrypted_deletion_protected_aurora_serverless_v2_postgresql_16_cluster(
        assertions: CdkTemplate) -> None:
    assertions.resource_count_is("AWS::RDS::DBCluster", 1)
    assertions.has_resource_properties("AWS::RDS::DBCluster", {
        "Engine": "aurora-postgresql", "EngineVersion": Match.string_like_regexp(r"^16\.([6-9]|\d\d)"),  # pgvector 0.8
        "StorageEncrypted": True, "DeletionProtection": True, "BackupRetentionPeriod": Match.any_value(),
        "EnableCloudwatchLogsExports": ["postgresql"],
    })
    assertions.has_resource("AWS::RDS::DBCluster", {"DeletionPolicy": "Snapshot"})
    assertions.has_resource_properties("AWS::RDS::DBInstance", {
        "Engine": "aurora-postgresql", "DBInstanceClass": "db.serverless", "PubliclyAccessible": False})


def test_the_database_refuses_connections_without_tls_and_closes_idle_sessions(template: Template) -> None:
    _, group = only(template, "AWS::RDS::DBClusterParameterGroup")
    assert group["Parameters"]["rds.force_ssl"] == "1"
    assert int(group["Parameters"]["idle_session_timeout"]) > 0  # so that an idle small cluster can pause


def test_small_is_one_writer_that_pauses_at_zero_acu_with_no_proxy(small: Template) -> None:
    _, cluster = only(small, "AWS::RDS::DBCluster")
    assert cluster["ServerlessV2ScalingConfiguration"] == {"MinCapacity": 0, "MaxCapacity": 4,
                                                           "SecondsUntilAutoPause": 300}
    assert len(resources(small, "AWS::RDS::DBInstance")) == 1
    assert not resources(small, "AWS::RDS::DBProxy")
    # Reserved concurrency bounds the connections; the functions go straight to the writer (the secret's host).
    assert _functions_group(small) in _ingress_sources(small, _cluster_group(small))
    assert "ENGRAM_DATABASE_HOST" not in environment(small, "api")
    assert all(environment(small, f)["ENGRAM_DATABASE_PREPARE"] == "true" for f in engram_functions(small))


def test_prod_is_a_writer_and_a_reader_behind_an_rds_proxy_that_requires_tls(prod: Template) -> None:
    _, cluster = only(prod, "AWS::RDS::DBCluster")
    assert cluster["ServerlessV2ScalingConfiguration"] == {"MinCapacity": 0.5, "MaxCapacity": 16}
    assert len(resources(prod, "AWS::RDS::DBInstance")) == 2
    proxy, props = only(prod, "AWS::RDS::DBProxy")
    attachment, _ = only(prod, "AWS::SecretsManager::SecretTargetAttachment")
    assert props["RequireTLS"] is True and props["EngineFamily"] == "POSTGRESQL"
    assert [auth["SecretArn"] for auth in props["Auth"]] == [{"Ref": attachment}]
    _, target_group = only(prod, "AWS::RDS::DBProxyTargetGroup")
    assert target_group["DBClusterIdentifiers"] == [{"Ref": only(prod, "AWS::RDS::DBCluster")[0]}]
    for folder in engram_functions(prod):
        assert environment(prod, folder)["ENGRAM_DATABASE_HOST"] == {"Fn::GetAtt": [proxy, "Endpoint"]}
        assert environment(prod, folder)["ENGRAM_DATABASE_PREPARE"] == "false"  # the proxy would pin each session
    proxy_group = props["VpcSecurityGroupIds"][0]["Fn::GetAtt"][0]
    assert _functions_group(prod) in _ingress_sources(prod, proxy_group)
    assert _functions_group(prod) not in _ingress_sources(prod, _cluster_group(prod))
    assert proxy_group in _ingress_sources(prod, _cluster_group(prod))


def test_min_and_max_acu_in_the_context_resize_the_cluster(overridden: Template) -> None:
    _, cluster = only(overridden, "AWS::RDS::DBCluster")
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
    assert hosted["VpcSecurityGroupIds"]["Fn::GetAtt"][0] in _ingress_sources(template, _cluster_group(template))
    for folder in engram_functions(template):
        assert environment(template, folder)["ENGRAM_DATABASE_SECRET_ARN"] == {"Ref": attachment}


def test_a_custom_resource_applies_the_migrations_again_whenever_a_migration_file_changes(template: Template) -> None:
    [resource] = [r for r in template["Resources"].values() if r["Type"] == "Custom::EngramSchema"]
    assert resource["Properties"]["MigrationsHash"] == migrations_hash()
    assert resource["Properties"]["EmbeddingDim"] == "1024"
    # The cluster's instances exist before the first migration runs.
    instances = set(resources(template, "AWS::RDS::DBInstance"))
    assert instances <= set(resource["DependsOn"])
    schema, _ = _schema(template)
    provider = resource["Properties"]["ServiceToken"]["Fn::GetAtt"][0]
    framework = template["Resources"][provider]["Properties"]["Environment"]["Variables"]
    assert framework["USER_ON_EVENT_FUNCTION_ARN"] == {"Fn::GetAtt": [schema, "Arn"]}


def test_the_migrations_function_runs_in_the_vpc_on_the_engram_layer_and_is_no_engram_function(
        template: Template) -> None:
    _, props = _schema(template)
    layer, _ = only(template, "AWS::Lambda::LayerVersion")
    assert props["Layers"] == [{"Ref": layer}] and props["Architectures"] == ["arm64"]
    assert props["Handler"] == "handler.on_event" and props["VpcConfig"]["SubnetIds"]
    assert props["Environment"]["Variables"]["ENGRAM_DATABASE_SECRET_ARN"]
    assert "ENGRAM_DATABASE_HOST" not in props["Environment"]["Variables"]  # DDL goes to the writer, not the proxy
    group = props["VpcConfig"]["SecurityGroupIds"][0]["Fn::GetAtt"][0]
    assert group in _ingress_sources(template, _cluster_group(template))
    assert len(engram_functions(template)) == 6  # the local runtime will not route to it


def test_small_has_no_opensearch_the_keyword_brain_is_postgresql_full_text_search(small: Template) -> None:
    assert not resources(small, "AWS::OpenSearchService::Domain")
    for folder in engram_functions(small):
        env = environment(small, folder)
        assert env["ENGRAM_KEYWORD_INDEX"] == "postgres" and "OPENSEARCH_URL" not in env


def test_the_prod_search_domain_is_encrypted_https_only_zone_aware_and_inside_the_vpc(prod: Template) -> None:
    CdkTemplate.from_json(prod).has_resource_properties("AWS::OpenSearchService::Domain", {
        "EncryptionAtRestOptions": {"Enabled": True}, "NodeToNodeEncryptionOptions": {"Enabled": True},
        "DomainEndpointOptions": Match.object_like({"EnforceHTTPS": True,
                                                    "TLSSecurityPolicy": Match.string_like_regexp("TLS-1-2")}),
        "VPCOptions": {"SubnetIds": Match.any_value(), "SecurityGroupIds": Match.any_value()},
        "ClusterConfig": Match.object_like({"InstanceCount": 2, "ZoneAwarenessEnabled": True,
                                            "DedicatedMasterEnabled": True, "DedicatedMasterCount": 3}),
    })
    _, domain = only(prod, "AWS::OpenSearchService::Domain")
    assert len(domain["VPCOptions"]["SubnetIds"]) == 2


def test_prod_search_has_fine_grained_access_with_the_migrations_role_as_master(prod: Template) -> None:
    _, domain = only(prod, "AWS::OpenSearchService::Domain")
    security = domain["AdvancedSecurityOptions"]
    assert security["Enabled"] is True and security["InternalUserDatabaseEnabled"] is False
    _, schema = _schema(prod)
    assert security["MasterUserOptions"]["MasterUserARN"] == {"Fn::GetAtt": [role_of(schema), "Arn"]}


def test_the_migrations_map_exactly_the_roles_of_the_functions_that_use_the_index(prod: Template, small: Template) -> None:
    functions = engram_functions(prod)
    [resource] = [r for r in prod["Resources"].values() if r["Type"] == "Custom::EngramSchema"]
    mapped = {arn["Fn::GetAtt"][0] for arn in resource["Properties"]["SearchRoleArns"]}
    assert mapped == {role_of(functions[f][1]) for f in ("api", "query_step", "extract")}
    [resource] = [r for r in small["Resources"].values() if r["Type"] == "Custom::EngramSchema"]
    assert resource["Properties"]["SearchRoleArns"] == []


def test_only_the_functions_and_the_migrations_may_connect_to_the_search_domain(prod: Template) -> None:
    _, domain = only(prod, "AWS::OpenSearchService::Domain")
    [group] = [g["Fn::GetAtt"][0] for g in domain["VPCOptions"]["SecurityGroupIds"]]
    _, schema = _schema(prod)
    schema_group = schema["VpcConfig"]["SecurityGroupIds"][0]["Fn::GetAtt"][0]
    assert _ingress_sources(prod, group) == {_functions_group(prod), schema_group}
    ingress = [r for r in resources(prod, "AWS::EC2::SecurityGroupIngress").values()
               if r["GroupId"] == {"Fn::GetAtt": [group, "GroupId"]}]
    assert {(r["FromPort"], r["ToPort"]) for r in ingress} == {(443, 443)}
