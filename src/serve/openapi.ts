/** The route table (routes.ts) rendered as an OpenAPI 3.1 document: what GET /openapi.json answers and openapi.json holds. */
import { PROBLEM_SCHEMA, ROUTES, type JsonSchema, type RouteSpec } from './routes.js';
import { PROBLEM_CONTENT_TYPE } from './problems.js';

function parametersOf(route: RouteSpec): JsonSchema[] {
  const parameters: JsonSchema[] = [];
  for (const [where, schema] of [
    ['path', route.params],
    ['query', route.query],
    ['header', route.headers],
  ] as const) {
    const properties = (schema?.['properties'] ?? {}) as Record<string, JsonSchema>;
    const required = (schema?.['required'] ?? []) as string[];
    for (const [name, property] of Object.entries(properties)) {
      const { description, ...rest } = property;
      parameters.push({
        name,
        in: where,
        required: required.includes(name),
        ...(description ? { description } : {}),
        schema: rest,
      });
    }
  }
  return parameters;
}

function operationOf(route: RouteSpec): JsonSchema {
  const responses: Record<string, JsonSchema> = {};
  for (const [status, response] of Object.entries(route.responses)) {
    const isProblem = Number(status) >= 400;
    const schema = isProblem ? { $ref: '#/components/schemas/Problem' } : response.schema;
    responses[status] = {
      description: response.description,
      ...(schema
        ? { content: { [response.contentType ?? (isProblem ? PROBLEM_CONTENT_TYPE : 'application/json')]: { schema } } }
        : {}),
    };
  }
  const parameters = parametersOf(route);
  return {
    operationId: route.operationId,
    summary: route.summary,
    ...(route.auth ? {} : { security: [] }),
    ...(parameters.length ? { parameters } : {}),
    ...(route.body ? { requestBody: { required: true, content: { 'application/json': { schema: route.body } } } } : {}),
    responses,
  };
}

export function openApiDocument(version: string): JsonSchema {
  const paths: Record<string, Record<string, JsonSchema>> = {};
  for (const route of ROUTES) {
    const path = route.openapiPath ?? route.url;
    (paths[path] ??= {})[route.method.toLowerCase()] = operationOf(route);
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'memvault serve',
      version,
      description:
        "Claude's memory tool (memory_20250818) over HTTP, on memvault's encrypted store. The user is the credential's: a user's bearer JWT (its sub), or a service API key with the act-as scope naming the user in Memvault-User.",
    },
    security: [{ bearer: [] }],
    paths,
    components: {
      securitySchemes: {
        bearer: {
          type: 'http',
          scheme: 'bearer',
          description: "A user's JWT from the configured issuer, or a service API key (mvk_...).",
        },
      },
      schemas: { Problem: PROBLEM_SCHEMA },
    },
  };
}
