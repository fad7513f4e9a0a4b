// The TypeScript SDK's client driving an MCP server; prints one JSON report on stdout.
//
//   node client.mjs [--offer VERSION] stdio COMMAND [ARG...]
//   node client.mjs [--offer VERSION] http URL
//
// It connects (spawning COMMAND over stdio, or to URL over Streamable HTTP), declares the
// elicitation capability, lists the tools and calls `structured` {a: 3, b: 4}. When the
// server offers the tools `ask` and `link` it also calls `ask` three times, its
// elicitation handler answering accept {name: "Ada"}, then decline, then cancel, and calls
// `link` and reads the resource the link points to. The report holds the protocol version
// the server answered in its initialize result, every result, and the params of each
// elicitation request.
//
// The SDK's Client always offers its newest revision. --offer VERSION offers VERSION
// instead, by rewriting the initialize request on its way to the transport, so the
// client's acceptance of an older answer is the SDK's own.

import { Client, ElicitRequestSchema, StdioClientTransport, StreamableHTTPClientTransport,
         watchdog } from './sdk.mjs';

watchdog(40, 'client.mjs');

const argv = process.argv.slice(2);
let offer;
if (argv[0] === '--offer') {
    offer = argv[1];
    argv.splice(0, 2);
}
const [kind, target, ...rest] = argv;
const transport = kind === 'stdio'
    ? new StdioClientTransport({ command: target, args: rest, cwd: process.cwd(), stderr: 'inherit' })
    : new StreamableHTTPClientTransport(new URL(target));

// Watch the initialize exchange through the transport's public interface: what the
// client sends goes through send(), what it receives through the onmessage it installs.
const report = { offered: offer, elicitations: [] };
let initializeId;
const send = transport.send.bind(transport);
transport.send = async (message, options) => {
    if (message.method === 'initialize') {
        initializeId = message.id;
        if (offer !== undefined) {
            message = { ...message, params: { ...message.params, protocolVersion: offer } };
        }
        report.offered = message.params.protocolVersion;
    }
    return send(message, options);
};
let onmessage;
Object.defineProperty(transport, 'onmessage', {
    configurable: true,
    get: () => onmessage,
    set: (handler) => {
        onmessage = handler === undefined ? undefined : (message, extra) => {
            if (initializeId !== undefined && message.id === initializeId && message.result) {
                report.protocolVersion = message.result.protocolVersion;
            }
            handler(message, extra);
        };
    },
});

const client = new Client({ name: 'ts-sdk-client', version: '1.0.0' },
                          { capabilities: { elicitation: { form: {} } } });
const answers = [
    { action: 'accept', content: { name: 'Ada' } },
    { action: 'decline' },
    { action: 'cancel' },
];
client.setRequestHandler(ElicitRequestSchema, async (request) => {
    report.elicitations.push(request.params);
    return answers[report.elicitations.length - 1] ?? { action: 'cancel' };
});

try {
    await client.connect(transport);
    report.serverInfo = client.getServerVersion();
    report.capabilities = client.getServerCapabilities();
    report.tools = (await client.listTools()).tools;
    report.structured = await client.callTool({ name: 'structured', arguments: { a: 3, b: 4 } });
    const names = report.tools.map((tool) => tool.name);
    if (names.includes('ask')) {
        report.ask = [];
        for (let i = 0; i < answers.length; i++) {
            report.ask.push(await client.callTool({ name: 'ask', arguments: {} }));
        }
    }
    if (names.includes('link')) {
        report.link = await client.callTool({ name: 'link', arguments: {} });
        const links = report.link.content.filter((item) => item.type === 'resource_link');
        report.read = await Promise.all(links.map((item) => client.readResource({ uri: item.uri })));
    }
} catch (error) {
    report.error = String(error?.stack ?? error);
    process.exitCode = 1;
} finally {
    await client.close();
}
process.stdout.write(`${JSON.stringify(report)}\n`);
