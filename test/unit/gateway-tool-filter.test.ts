// The tool filter's parsing on its own: SSE events split anywhere across chunks, CRLF and CR line
// ends, multi-line data, fields other than data kept; prefixes in policies; requests that are not
// JSON, or not calls, left alone.
import { describe, expect, it } from 'vitest';
import { filterJsonBody, inspectRequest, SseToolFilter } from '../../edge/gateway/tool-filter.ts';
import { compileToolPolicy } from '../../edge/gateway/tool-policy.ts';

const policy = compileToolPolicy({ allow: ['read_*', 'echo'], deny: ['read_secret'] })!;
const list = (id: number) => ({
  jsonrpc: '2.0',
  id,
  result: { tools: ['echo', 'read_file', 'read_secret', 'write_file'].map((name) => ({ name })) },
});

describe('the tool filter', () => {
  it('matches exact names and prefixes, deny over allow', () => {
    expect(['echo', 'read_file', 'read_secret', 'write_file', 'reader'].filter((t) => policy.allows(t))).toEqual(['echo', 'read_file']);
    expect(compileToolPolicy({ allow: [], deny: [] })).toBeUndefined();
    expect(compileToolPolicy({ allow: ['*'], deny: ['x'] })!.allows('anything')).toBe(true);
  });

  it('filters SSE events however the stream is cut, keeping ids, other events and line ends', () => {
    const stream =
      `: comment\r\n\r\nid: 42\r\nevent: message\r\ndata: ${JSON.stringify(list(1))}\r\n\r\n` +
      `event: message\ndata: {"jsonrpc":"2.0",\ndata: "method":"notifications/progress"}\n\n` +
      `data: ${JSON.stringify(list(2))}\r\r`;
    for (const size of [1, 3, 7, 64, stream.length]) {
      const filter = new SseToolFilter(policy, 1_000_000);
      let out = '';
      const bytes = Buffer.from(stream);
      for (let i = 0; i < bytes.length; i += size) out += filter.push(bytes.subarray(i, i + size));
      out += filter.end();
      expect(out).toContain(': comment\r\n\r\n');
      // A rewritten event keeps its fields, with LF line ends.
      expect(out).toContain('id: 42\nevent: message\ndata: ');
      expect(out).toContain('data: {"jsonrpc":"2.0",\ndata: "method":"notifications/progress"}\n\n');
      const tools = [...out.matchAll(/"tools":(\[[^\]]*\])/g)].map((m) => JSON.parse(m[1]).map((t: { name: string }) => t.name));
      expect(tools).toEqual([
        ['echo', 'read_file'],
        ['echo', 'read_file'],
      ]);
    }
  });

  it('refuses an event larger than its cap', () => {
    const filter = new SseToolFilter(policy, 100);
    expect(() => filter.push(Buffer.from(`data: ${'x'.repeat(200)}`))).toThrow(/larger than/);
  });

  it('keeps multi-byte characters split across chunks', () => {
    const filter = new SseToolFilter(policy, 1_000);
    const bytes = Buffer.from('data: {"text":"héllo ✓"}\n\n');
    const out = filter.push(bytes.subarray(0, 16)) + filter.push(bytes.subarray(16)) + filter.end();
    expect(out).toBe('data: {"text":"héllo ✓"}\n\n');
  });

  it('leaves requests alone unless they call a denied tool', () => {
    expect(inspectRequest(Buffer.from('not json'), policy, 's')).toMatchObject({ denied: [], answerAlone: false });
    expect(inspectRequest(Buffer.from('{"jsonrpc":"2.0","id":1,"method":"tools/list"}'), policy, 's').denied).toEqual([]);
    const notification = '{"jsonrpc":"2.0","method":"tools/call","params":{"name":"write_file"}}';
    expect(inspectRequest(Buffer.from(notification), policy, 's').denied).toEqual([]);
    const mixed = inspectRequest(
      Buffer.from(
        '[{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"write_file"}},{"jsonrpc":"2.0","id":2,"method":"ping"}]',
      ),
      policy,
      's',
    );
    expect(mixed).toMatchObject({ batch: true, answerAlone: false, denied: [{ id: 1, error: { code: -32602 } }] });
    expect(JSON.parse(mixed.body!.toString())).toEqual([{ jsonrpc: '2.0', id: 2, method: 'ping' }]);
  });

  it('reads the answer only when it may list tools or must carry the gateway’s errors, escapes included', () => {
    const verdict = (body: string) => inspectRequest(Buffer.from(body), policy, 's');
    expect(verdict('{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo"}}').readsAnswer).toBe(false);
    expect(verdict('{"jsonrpc":"2.0","id":1,"method":"ping"}').readsAnswer).toBe(false);
    expect(verdict('{"jsonrpc":"2.0","id":1,"method":"tools/list"}').readsAnswer).toBe(true);
    expect(verdict('{"jsonrpc":"2.0","id":1,"method":"tools\\/list"}').readsAnswer).toBe(true);
    // The same JSON strings as "tools/call" and "write_file": refused, not passed by the byte search.
    const escaped = verdict('{"jsonrpc":"2.0","id":1,"method":"tools\\u002fcall","params":{"name":"\\u0077rite_file"}}');
    expect(escaped).toMatchObject({ answerAlone: true, denied: [{ id: 1, error: { code: -32602 } }] });
  });

  it('filters JSON answers, single or batched, and passes other bodies byte for byte', () => {
    const raw = Buffer.from(JSON.stringify(list(1)));
    expect(JSON.parse(filterJsonBody(raw, policy, []).toString()).result.tools).toHaveLength(2);
    const untouched = Buffer.from('{"jsonrpc":"2.0","id":1,"result":{"content":[]}}  ');
    expect(filterJsonBody(untouched, policy, [])).toBe(untouched);
    const extra = { jsonrpc: '2.0', id: 9, error: { code: -32602, message: 'no' } };
    expect(JSON.parse(filterJsonBody(Buffer.from(JSON.stringify([list(1)])), policy, [extra]).toString())).toHaveLength(2);
  });
});
