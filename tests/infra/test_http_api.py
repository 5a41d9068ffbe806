"""The HTTP API: JWT on every route, ingest and api behind their routes, throttling and access logs."""

from __future__ import annotations

import pytest
from aws_cdk.assertions import Match
from aws_cdk.assertions import Template as CdkTemplate

from tests.infra.synth import Template, engram_functions, only, resources

pytestmark = pytest.mark.infra


def test_the_api_is_an_http_api_with_a_jwt_authorizer_on_the_bearer_token(assertions: CdkTemplate) -> None:
    assertions.has_resource_properties("AWS::ApiGatewayV2::Api", {"ProtocolType": "HTTP"})
    assertions.has_resource_properties("AWS::ApiGatewayV2::Authorizer", {
        "AuthorizerType": "JWT", "IdentitySource": ["$request.header.Authorization"],
        "JwtConfiguration": {"Issuer": Match.any_value(), "Audience": Match.any_value()},
    })


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
    assert routed == {"POST /v1/worlds/{world}/events": "ingest", "ANY /v1/{proxy+}": "api"}


def test_the_stage_throttles_requests_and_writes_access_logs(template: Template) -> None:
    _, stage = only(template, "AWS::ApiGatewayV2::Stage")
    assert stage["AutoDeploy"] is True
    assert stage["DefaultRouteSettings"]["ThrottlingRateLimit"] > 0
    assert stage["DefaultRouteSettings"]["ThrottlingBurstLimit"] >= stage["DefaultRouteSettings"]["ThrottlingRateLimit"]
    log_group, _ = stage["AccessLogSettings"]["DestinationArn"]["Fn::GetAtt"]
    assert template["Resources"][log_group]["Type"] == "AWS::Logs::LogGroup"
    assert "$context.requestId" in stage["AccessLogSettings"]["Format"]
