"""API: an HTTP API with a JWT authorizer on every route; ingest has its own function, everything else
goes to `api`. Each route has its own throttle (queries call the model: they get the tightest), CORS
stays off unless origins are named, and every request is written to a JSON access log."""

from __future__ import annotations

import json

from aws_cdk import Duration
from aws_cdk import aws_apigatewayv2 as apigw
from aws_cdk import aws_apigatewayv2_authorizers as authorizers
from aws_cdk import aws_apigatewayv2_integrations as integrations
from aws_cdk import aws_cognito as cognito
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from constructs import Construct

from infra.config import Deployment

EVENTS_ROUTE = "/v1/worlds/{world}/events"
QUERIES_ROUTE = "/v1/worlds/{world}/queries"
PROXY_ROUTE = "/v1/{proxy+}"
# Route key -> (steady requests per second, burst). The account-wide default is 10,000 rps.
THROTTLES: dict[str, tuple[int, int]] = {
    f"POST {EVENTS_ROUTE}": (100, 200),
    f"POST {QUERIES_ROUTE}": (10, 20),
    f"ANY {PROXY_ROUTE}": (50, 100),
}
ACCESS_LOG_FORMAT = json.dumps({
    "requestId": "$context.requestId", "ip": "$context.identity.sourceIp", "time": "$context.requestTime",
    "method": "$context.httpMethod", "route": "$context.routeKey", "status": "$context.status",
    "latencyMs": "$context.responseLatency", "integrationLatencyMs": "$context.integrationLatency",
    "responseLength": "$context.responseLength", "integrationError": "$context.integrationErrorMessage",
    "authorizerError": "$context.authorizer.error", "subject": "$context.authorizer.claims.sub",
})


class Api(Construct):
    def __init__(self, scope: Construct, id: str, *, ingest: lambda_.IFunction, api: lambda_.IFunction,
                 deployment: Deployment) -> None:
        super().__init__(scope, id)
        issuer, audience = deployment.jwt_issuer, deployment.jwt_audience
        if not issuer:  # no identity provider given: a Cognito user pool issues the tokens
            issuer, audience = self._user_pool()
        authorizer = authorizers.HttpJwtAuthorizer("Jwt", issuer, jwt_audience=[audience or "engram"])
        cors = apigw.CorsPreflightOptions(
            allow_origins=list(deployment.cors_origins), allow_headers=["authorization", "content-type"],
            allow_methods=[apigw.CorsHttpMethod.ANY], max_age=Duration.hours(1)) if deployment.cors_origins else None
        self.access_logs = logs.LogGroup(self, "AccessLogs", retention=logs.RetentionDays.ONE_MONTH)
        self.http_api = apigw.HttpApi(self, "Http", api_name="engram", default_authorizer=authorizer,
                                      create_default_stage=False, cors_preflight=cors)
        self.stage = self.http_api.add_stage("Live", stage_name="$default", auto_deploy=True,
                                             throttle=apigw.ThrottleSettings(rate_limit=THROTTLES[f"ANY {PROXY_ROUTE}"][0],
                                                                             burst_limit=THROTTLES[f"ANY {PROXY_ROUTE}"][1]))
        cfn_stage = self.stage.node.default_child
        assert isinstance(cfn_stage, apigw.CfnStage)
        cfn_stage.access_log_settings = apigw.CfnStage.AccessLogSettingsProperty(
            destination_arn=self.access_logs.log_group_arn, format=ACCESS_LOG_FORMAT)
        cfn_stage.route_settings = {key: {"ThrottlingRateLimit": rate, "ThrottlingBurstLimit": burst}
                                    for key, (rate, burst) in THROTTLES.items()}
        to_api = integrations.HttpLambdaIntegration("Api", api)
        self.http_api.add_routes(path=EVENTS_ROUTE, methods=[apigw.HttpMethod.POST],
                                 integration=integrations.HttpLambdaIntegration("Ingest", ingest))
        self.http_api.add_routes(path=QUERIES_ROUTE, methods=[apigw.HttpMethod.POST], integration=to_api)
        self.http_api.add_routes(path=PROXY_ROUTE, methods=[apigw.HttpMethod.ANY], integration=to_api)
        self.url = self.stage.url

    def _user_pool(self) -> tuple[str, str]:
        pool = cognito.UserPool(self, "Users", self_sign_up_enabled=False,
                                password_policy=cognito.PasswordPolicy(min_length=12, require_symbols=True,
                                                                       require_digits=True, require_lowercase=True,
                                                                       require_uppercase=True),
                                mfa=cognito.Mfa.OPTIONAL, custom_attributes={"worlds": cognito.StringAttribute(mutable=True)})
        # SRP for libraries, password auth (over TLS) for the scripted first call of the README.
        client = pool.add_client("Agents", auth_flows=cognito.AuthFlow(user_srp=True, user_password=True))
        self.user_pool, self.user_pool_client = pool, client
        return f"https://cognito-idp.{pool.stack.region}.amazonaws.com/{pool.user_pool_id}", client.user_pool_client_id
