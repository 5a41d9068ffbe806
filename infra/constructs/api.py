"""API: an HTTP API with a JWT authorizer; ingest has its own function, everything else goes to `api`."""

from __future__ import annotations

from aws_cdk import aws_apigatewayv2 as apigw
from aws_cdk import aws_apigatewayv2_authorizers as authorizers
from aws_cdk import aws_apigatewayv2_integrations as integrations
from aws_cdk import aws_cognito as cognito
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from constructs import Construct

THROTTLE_RATE = 200
THROTTLE_BURST = 400


class Api(Construct):
    def __init__(self, scope: Construct, id: str, *, ingest: lambda_.IFunction, api: lambda_.IFunction,
                 jwt_issuer: str | None, jwt_audience: str | None) -> None:
        super().__init__(scope, id)
        if not jwt_issuer:  # no identity provider given: a Cognito user pool issues the tokens
            pool = cognito.UserPool(self, "Users", self_sign_up_enabled=False, advanced_security_mode=None,
                                    password_policy=cognito.PasswordPolicy(min_length=12, require_symbols=True, require_digits=True,
                                                                           require_lowercase=True, require_uppercase=True),
                                    mfa=cognito.Mfa.OPTIONAL,
                                    custom_attributes={"worlds": cognito.StringAttribute(mutable=True)})
            client = pool.add_client("Agents", auth_flows=cognito.AuthFlow(user_srp=True))
            jwt_issuer = f"https://cognito-idp.{pool.stack.region}.amazonaws.com/{pool.user_pool_id}"
            jwt_audience = client.user_pool_client_id
        authorizer = authorizers.HttpJwtAuthorizer("Jwt", jwt_issuer, jwt_audience=[jwt_audience or "engram"])
        access_logs = logs.LogGroup(self, "AccessLogs", retention=logs.RetentionDays.ONE_MONTH)
        self.http_api = apigw.HttpApi(self, "Http", api_name="engram", default_authorizer=authorizer,
                                      create_default_stage=False)
        stage = self.http_api.add_stage("Live", stage_name="$default", auto_deploy=True,
                                        throttle=apigw.ThrottleSettings(rate_limit=THROTTLE_RATE,
                                                                        burst_limit=THROTTLE_BURST))
        cfn_stage = stage.node.default_child
        assert isinstance(cfn_stage, apigw.CfnStage)
        cfn_stage.access_log_settings = apigw.CfnStage.AccessLogSettingsProperty(
            destination_arn=access_logs.log_group_arn,
            format='{"requestId":"$context.requestId","route":"$context.routeKey","status":"$context.status"}')
        self.http_api.add_routes(path="/v1/worlds/{world}/events", methods=[apigw.HttpMethod.POST],
                                 integration=integrations.HttpLambdaIntegration("Ingest", ingest))
        self.http_api.add_routes(path="/v1/{proxy+}", methods=[apigw.HttpMethod.ANY],
                                 integration=integrations.HttpLambdaIntegration("Api", api))
        self.url = stage.url
