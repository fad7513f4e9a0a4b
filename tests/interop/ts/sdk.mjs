// The official TypeScript SDK and zod, as .ci/conformance installs them into
// .ci/node/node_modules (pinned by .ci/node/package-lock.json).
//
// ES modules ignore NODE_PATH and these programs live outside .ci/node, so each module is
// imported by its file URL: the path the package's "exports" map gives for `import`
// (the SDK's "./*" -> "./dist/esm/*", zod's "." -> "./index.js").

const NODE_MODULES = new URL('../../../.ci/node/node_modules/', import.meta.url);

const load = (path) => import(new URL(path, NODE_MODULES).href);

export const { Client } = await load('@modelcontextprotocol/sdk/dist/esm/client/index.js');
export const { StdioClientTransport } = await load('@modelcontextprotocol/sdk/dist/esm/client/stdio.js');
export const { StreamableHTTPClientTransport } = await load(
    '@modelcontextprotocol/sdk/dist/esm/client/streamableHttp.js');
export const { McpServer } = await load('@modelcontextprotocol/sdk/dist/esm/server/mcp.js');
export const { StdioServerTransport } = await load('@modelcontextprotocol/sdk/dist/esm/server/stdio.js');
export const { StreamableHTTPServerTransport } = await load(
    '@modelcontextprotocol/sdk/dist/esm/server/streamableHttp.js');
export const { ElicitRequestSchema, LATEST_PROTOCOL_VERSION, UrlElicitationRequiredError } = await load(
    '@modelcontextprotocol/sdk/dist/esm/types.js');
export const { z } = await load('zod/index.js');

/** Ends the program with status 2 if it has not finished within `seconds`. */
export function watchdog(seconds, what) {
    setTimeout(() => {
        process.stderr.write(`${what}: not finished within ${seconds}s\n`);
        process.exit(2);
    }, seconds * 1000).unref();
}
