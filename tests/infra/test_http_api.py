"""The HTTP API: JWT on every route, ingest and api behind their routes, per-route throttling, CORS off
unless origins are named, and JSON access logs."""

from __future__ import annotations

import json

import pytest
from aws_cdk.assertions import Match
from aws_cdk.assertions import Template as CdkTemplate

from engram.http.auth import claim_worlds
from tests.infra.synth import Template, engram_functions, only, resources

pytestmark = pytest.mark.infra


def test_the_api_is_an_http_api_with_a_jwt_authorizer_on_the_bearer_token(assertions: CdkTemplate) -> None:
    assertions.has_resource_properties("AWS::ApiGatewayV2::Api", {"ProtocolType": "HTTP"})
    assertions.has_resource_properties("AWS::ApiGatewayV2::Authorizer", {
        "AuthorizerType": "JWT", "IdentitySource": ["$request.header.Authorization"],
        "JwtConfiguration": {"Issuer": Match.any_value(), "Audience": Match.any_value()},
    })


def test_without_an_issuer_in_the_context_a_cognito_user_pool_issues_the_tokens(small: Template) -> None:
    pool, _ = only(small, "AWS::Cognito::UserPool")
    client, _ = only(small, "AWS::Cognito::UserPoolClient")
    _, authorizer = only(small, "AWS::ApiGatewayV2::Authorizer")
    assert {"Ref": pool} in authorizer["JwtConfiguration"]["Issuer"]["Fn::Join"][1]
    assert authorizer["JwtConfiguration"]["Audience"] == [{"Ref": client}]


def test_the_issuer_and_audience_come_from_the_context(overridden: Template) -> None:
    _, authorizer = only(overridden, "AWS::ApiGatewayV2::Authorizer")
    assert authorizer["JwtConfiguration"] == {"Issuer": "https://issuer.example.com/", "Audience": ["engram-agents"]}
    assert not resources(overridden, "AWS::Cognito::UserPool")


def test_every_route_requires_the_jwt_authorizer(template: Template) -> None:
    authorizer, _ = only(template, "AWS::ApiGatewayV2::Authorizer")
    routes = resources(template, "AWS::ApiGatewayV2::Route").values()
    assert routes
    for route in routes:
        assert route["AuthorizationType"] == "JWT" and route["AuthorizerId"] == {"Ref": authorizer}, route["RouteKey"]


def test_posting_events_goes_to_ingest_and_everything_else_under_v1_to_api(template: Template) -> None:
    function_of = {logical: folder for folder, (logical, _) in engram_functions(template).items()}
    integrations = {logical: function_of[props["IntegrationUri"]["Fn::GetAtt"][0]]
                    for logical, props in resources(template, "AWS::ApiGatewayV2::Integration").items()}
    routed = {route["RouteKey"]: integrations[route["Target"]["Fn::Join"][1][1]["Ref"]]
              for route in resources(template, "AWS::ApiGatewayV2::Route").values()}
    assert routed == {"POST /v1/worlds/{world}/events": "ingest", "POST /v1/worlds/{world}/queries": "api",
                      "ANY /v1/{proxy+}": "api"}


def test_each_route_has_its_own_throttle_and_queries_which_call_the_model_the_tightest(template: Template) -> None:
    _, stage = only(template, "AWS::ApiGatewayV2::Stage")
    routes = {route["RouteKey"] for route in resources(template, "AWS::ApiGatewayV2::Route").values()}
    settings = stage["RouteSettings"]
    assert set(settings) == routes
    for limits in settings.values():
        assert 0 < limits["ThrottlingRateLimit"] <= limits["ThrottlingBurstLimit"]
    rates = {key: limits["ThrottlingRateLimit"] for key, limits in settings.items()}
    assert min(rates, key=rates.__getitem__) == "POST /v1/worlds/{world}/queries"
    assert stage["DefaultRouteSettings"]["ThrottlingRateLimit"] > 0


def test_cors_is_off_by_default_and_on_only_for_the_named_origins(small: Template, overridden: Template) -> None:
    _, api = only(small, "AWS::ApiGatewayV2::Api")
    assert "CorsConfiguration" not in api
    _, api = only(overridden, "AWS::ApiGatewayV2::Api")
    assert api["CorsConfiguration"]["AllowOrigins"] == ["https://app.example.com"]


def test_the_stage_writes_json_access_logs_with_the_request_route_status_and_latency(template: Template) -> None:
    _, stage = only(template, "AWS::ApiGatewayV2::Stage")
    assert stage["AutoDeploy"] is True
    log_group, _ = stage["AccessLogSettings"]["DestinationArn"]["Fn::GetAtt"]
    assert template["Resources"][log_group]["Type"] == "AWS::Logs::LogGroup"
    fields = json.loads(stage["AccessLogSettings"]["Format"])
    assert {"$context.requestId", "$context.routeKey", "$context.status", "$context.responseLatency"} <= set(
        fields.values())


def test_a_cognito_id_tokens_custom_worlds_attribute_names_the_worlds_the_caller_may_touch(small: Template) -> None:
    _, pool = only(small, "AWS::Cognito::UserPool")
    assert {"Name": "worlds", "AttributeDataType": "String", "Mutable": True} in pool["Schema"]
    assert claim_worlds({"custom:worlds": "demo,team-a"}) == {"demo", "team-a"}
    assert claim_worlds({"engram:worlds": ["demo"], "custom:worlds": "other"}) == {"demo"}
