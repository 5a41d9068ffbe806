"""`engram mcp`: an MCP server (stdio) that gives an agent engram's memory as nine tools.

Each tool is a thin call of the Python client against a running engram (the local server or AWS), and
its input and output schemas are the API's own pydantic models, so an agent sees the same contract an
HTTP caller does. API errors come back as tool errors with the API's message.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import Field

from engram.model.entities import EntityDetail
from engram.model.events import Erasure, EventIn, IngestResponse
from engram.model.memories import ExplainedFact, FactHistory, MemoryDeletion
from engram.model.prompt_context import PromptContext
from engram.model.queries import QueryConfig, QueryResponse
from engram.model.search import SearchResponse
from engram.sdk.client import DEFAULT_URL, ApiError, AsyncEngramClient

INSTRUCTIONS = (
    "engram is your long-term memory. Call `remember` with what the user says (and what you answer) so it "
    "is kept; `get_context` for memory as text to put in your prompt; `recall` to search memory; `ask` for an answer with sources and a confidence; `get_entity` for "
    "what is known about a person, place or thing; `forget` only when the user asks to be erased."
)
World = Annotated[str, Field(description="the world (tenant) id", pattern=r"^[A-Za-z0-9][A-Za-z0-9._:@-]{0,127}$")]
UserId = Annotated[str, Field(description="the user the memory belongs to")]


def build_server(client: AsyncEngramClient) -> MCPServer[Any]:
    """The MCP server with engram's tools, each calling `client`."""
    server: MCPServer[Any] = MCPServer("engram", instructions=INSTRUCTIONS)

    async def call(coroutine: Any) -> Any:
        try:
            return await coroutine
        except ApiError as exc:  # the agent sees the API's status, code and message as a tool error
            raise ToolError(f"engram refused the call: {exc.status} {exc.code}: {exc.message}") from exc

    @server.tool(description="Store conversation events in memory (1 to 100); they are enriched in the background.")
    async def remember(world: World, events: Annotated[list[EventIn], Field(min_length=1, max_length=100)]
                       ) -> IngestResponse:
        result: IngestResponse = await call(client.add_events(world, events))
        return result

    @server.tool(description="Search memory (keyword, semantic and graph brains fused); optionally one user's; with "
                             "as_of, memory as it stood then (the facts true then).")
    async def recall(world: World, query: Annotated[str, Field(min_length=1, max_length=1000)],
                     user_id: UserId | None = None, limit: Annotated[int, Field(ge=1, le=50)] = 10,
                     as_of: datetime | None = None) -> SearchResponse:
        result: SearchResponse = await call(client.search(world, query, user_id=user_id, limit=limit, as_of=as_of))
        return result

    @server.tool(description="Ask a question of memory: an answer with its sources, confidence and loop trace; with "
                             "as_of, answered with what was true then.")
    async def ask(world: World, user_id: UserId, question: Annotated[str, Field(min_length=1, max_length=4000)],
                  conversation_id: str | None = None, config: QueryConfig | None = None,
                  as_of: datetime | None = None) -> QueryResponse:
        result: QueryResponse = await call(client.ask(world, user_id, question, conversation_id=conversation_id,
                                                      config=config, as_of=as_of))
        return result

    @server.tool(description="Erase a user from memory everywhere (events, memories, signals, queries, index).")
    async def forget(world: World, user_id: UserId) -> Erasure:
        result: Erasure = await call(client.erase_user(world, user_id))
        return result

    @server.tool(description="An entity by id: its name, type, description, aliases (whose, how sure), facts and "
                             "relationships; with user_id, only that user's facts and relationships (and the world's).")
    async def get_entity(world: World, entity_id: str, user_id: UserId | None = None) -> EntityDetail:
        result: EntityDetail = await call(client.entity(world, entity_id, user_id=user_id))
        return result

    @server.tool(description="Memory as text for your prompt: the conversation context (latest exchanges, similar "
                             "and important past events, with who said it and when) and the user's current facts "
                             "relevant to the input, within max_tokens; also as items.")
    async def get_context(world: World, user_id: UserId, q: Annotated[str, Field(min_length=1, max_length=4000)],
                          conversation_id: str | None = None,
                          max_tokens: Annotated[int, Field(ge=1, le=100_000)] = 2000) -> PromptContext:
        result: PromptContext = await call(client.context(world, user_id, q, conversation_id=conversation_id,
                                                          max_tokens=max_tokens))
        return result

    @server.tool(description="Correct a fact (a semantic memory, sem_...) when the user says it is wrong: its value, "
                             "confidence (0..1) or valid time; only the fields given change; the change is audited.")
    async def correct_memory(world: World, memory_id: str,
                             object_value: Annotated[str | None, Field(min_length=1, max_length=1000)] = None,
                             confidence: Annotated[float | None, Field(ge=0.0, le=1.0)] = None,
                             valid_from: datetime | None = None, valid_to: datetime | None = None,
                             note: Annotated[str | None, Field(max_length=1000)] = None) -> ExplainedFact:
        result: ExplainedFact = await call(client.correct_memory(
            world, memory_id, object_value=object_value, confidence=confidence, valid_from=valid_from,
            valid_to=valid_to, note=note))
        return result

    @server.tool(description="Delete a fact (sem_...) the user wants forgotten: gone from memory, search and the "
                             "graph; an audit record keeps what it was.")
    async def delete_memory(world: World, memory_id: str,
                            note: Annotated[str | None, Field(max_length=1000)] = None) -> MemoryDeletion:
        result: MemoryDeletion = await call(client.delete_memory(world, memory_id, note=note))
        return result

    @server.tool(description="A fact's history (sem_...): the values it has had, in the order they became true, "
                             "with valid times, status and the conflict that closed each.")
    async def memory_history(world: World, memory_id: str) -> FactHistory:
        result: FactHistory = await call(client.memory_history(world, memory_id))
        return result

    return server


def run_stdio(url: str = DEFAULT_URL, token: str | None = None) -> None:
    """Serve the tools over stdio until the agent closes the stream."""
    import anyio

    async def main() -> None:
        async with AsyncEngramClient(url, token=token) as client:
            await build_server(client).run_stdio_async()

    anyio.run(main)
