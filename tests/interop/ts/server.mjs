// An MCP server made with the TypeScript SDK's McpServer.
//
//   node server.mjs stdio        serve over stdio
//   node server.mjs http PORT    serve Streamable HTTP at http://127.0.0.1:PORT/mcp (0: any
//                                free port); once listening, "Serving MCP on URL" on stderr
//
// Tools:
//   structured {a, b}  the sum and product of two integers, as structuredContent with an
//                      outputSchema, and the same JSON as text
//   ask                asks "What is your name?" (form elicitation: a required string `name`,
//                      a boolean `newsletter` defaulting to false) and answers "Hello, NAME!",
//                      or the action the user took; over HTTP the request goes out on the
//                      session's GET stream, as the SDK sends requests that name no
//                      related request
//   ask_inline         the same, sent as part of the tools/call (over HTTP, on its stream)
//   connect            asks the user to open https://example.com/connect (URL elicitation
//                      e-1); once accepted, tells the client it completed; answers with
//                      the action
//   locked             fails with -32042: the URL elicitation e-2 must be completed first
//   client             the client's capabilities and clientInfo, as JSON text

import { createServer } from 'node:http';
import { randomUUID } from 'node:crypto';

import { McpServer, StdioServerTransport, StreamableHTTPServerTransport,
         UrlElicitationRequiredError, z } from './sdk.mjs';

const server = new McpServer({ name: 'ts-sdk-server', version: '1.0.0' });

server.registerTool('structured', {
    title: 'Sum and product',
    description: 'The sum and the product of two integers.',
    inputSchema: { a: z.number().int(), b: z.number().int() },
    outputSchema: { sum: z.number().int(), product: z.number().int() },
}, async ({ a, b }) => {
    const output = { sum: a + b, product: a * b };
    return { content: [{ type: 'text', text: JSON.stringify(output) }], structuredContent: output };
});

const NAME_FORM = {
    mode: 'form',
    message: 'What is your name?',
    requestedSchema: {
        type: 'object',
        properties: {
            name: { type: 'string', title: 'Name', minLength: 1 },
            newsletter: { type: 'boolean', title: 'Newsletter', default: false },
        },
        required: ['name'],
    },
};

async function ask(options) {
    const answer = await server.server.elicitInput(NAME_FORM, options);
    const text = answer.action === 'accept'
        ? `Hello, ${answer.content.name}! newsletter=${answer.content.newsletter ?? 'unset'}`
        : answer.action;
    return { content: [{ type: 'text', text }] };
}

server.registerTool('ask', { title: 'Ask for a name' }, async () => ask());
server.registerTool('ask_inline', { title: 'Ask for a name, inline' },
                    async (extra) => ask({ relatedRequestId: extra.requestId }));
server.registerTool('connect', { title: 'Connect an account' }, async () => {
    const answer = await server.server.elicitInput({
        mode: 'url', message: 'Connect your account', url: 'https://example.com/connect',
        elicitationId: 'e-1',
    });
    if (answer.action === 'accept') {
        await server.server.createElicitationCompletionNotifier('e-1')();
    }
    return { content: [{ type: 'text', text: answer.action }] };
});
server.registerTool('locked', { title: 'Needs authorisation' }, async () => {
    throw new UrlElicitationRequiredError([{
        mode: 'url', message: 'Authorise first', url: 'https://example.com/auth',
        elicitationId: 'e-2',
    }]);
});
server.registerTool('client', { title: 'The client' }, async () => ({
    content: [{ type: 'text', text: JSON.stringify({
        capabilities: server.server.getClientCapabilities(),
        clientInfo: server.server.getClientVersion(),
    }) }],
}));

const [kind, port] = process.argv.slice(2);
if (kind === 'stdio') {
    await server.connect(new StdioServerTransport());
} else {
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: () => randomUUID() });
    await server.connect(transport);
    const http = createServer((request, response) => {
        if (new URL(request.url, 'http://localhost').pathname !== '/mcp') {
            response.writeHead(404).end();
            return;
        }
        transport.handleRequest(request, response).catch((error) => {
            process.stderr.write(`${error?.stack ?? error}\n`);
            if (!response.headersSent) {
                response.writeHead(500).end();
            }
        });
    });
    http.listen(Number(port), '127.0.0.1', () => {
        process.stderr.write(`Serving MCP on http://127.0.0.1:${http.address().port}/mcp\n`);
    });
    const stop = () => {
        http.closeAllConnections();
        http.close();
        void server.close();
    };
    process.on('SIGTERM', stop);
    process.on('SIGINT', stop);
}
