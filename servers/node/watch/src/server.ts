// watch study (seed 004): a watch-style streaming server. It holds one folder of key-value
// pairs in memory and sends it whole to every watcher: Watch as one message, WatchSeparated
// as one message per pair, using the cache strategy chosen at start.
import { parseArgs } from 'node:util';
import { once } from 'node:events';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { makeFolder } from './folder';
import { STRATEGIES, StrategyName, Prepared, makeStrategy } from './strategies';

interface WatchRequest {
  folder: string;
}

type Call = grpc.ServerWritableStream<WatchRequest, unknown>;

function parseOptions() {
  const { values } = parseArgs({
    options: {
      host: { type: 'string', default: '127.0.0.1' },
      port: { type: 'string' },
      proto: { type: 'string' },
      strategy: { type: 'string', default: 'js_object' },
      folder: { type: 'string', default: 'small' },
      pairs: { type: 'string', default: '1000' },
      pair_bytes: { type: 'string', default: '500' },
    },
    strict: true,
  });
  const port = Number(values.port);
  const pairs = Number(values.pairs);
  const pairBytes = Number(values.pair_bytes);
  if (!values.proto) throw new Error('--proto <path to streambench.proto> is required');
  if (!Number.isInteger(port) || port <= 0) throw new Error(`--port: ${values.port} is not a port`);
  if (!Number.isInteger(pairs) || pairs <= 0) throw new Error(`--pairs: ${values.pairs} is not a positive integer`);
  if (!Number.isInteger(pairBytes) || pairBytes <= 0) throw new Error(`--pair_bytes: ${values.pair_bytes} is not a positive integer`);
  if (!(STRATEGIES as readonly string[]).includes(values.strategy!)) {
    throw new Error(`--strategy: ${values.strategy} is not one of ${STRATEGIES.join(', ')}`);
  }
  return {
    host: values.host!,
    port,
    proto: values.proto,
    strategy: values.strategy as StrategyName,
    folder: { name: values.folder!, pairs, pairBytes },
  };
}

/** Resolves when the stream can take more, or when the call is gone (then nothing waits). */
async function drained(call: Call): Promise<void> {
  const ac = new AbortController();
  try {
    await Promise.race([
      once(call, 'drain', { signal: ac.signal }),
      once(call, 'cancelled', { signal: ac.signal }),
      once(call, 'close', { signal: ac.signal }),
    ]);
  } catch {
    // 'error' rejects once(); the call is over either way.
  } finally {
    ac.abort(); // removes the listeners that did not fire
  }
}

/** Writes every message with backpressure; stops at once when the watcher goes away. */
async function send(call: Call, messages: unknown[]): Promise<void> {
  let gone = false;
  const stop = () => {
    gone = true;
  };
  call.once('cancelled', stop);
  try {
    for (const message of messages) {
      if (gone || call.cancelled) return;
      if (!call.write(message)) await drained(call);
    }
    if (!gone && !call.cancelled) call.end();
  } finally {
    call.off('cancelled', stop);
  }
}

function handler(folders: Map<string, Prepared>, pick: (p: Prepared) => unknown[]) {
  return (call: Call) => {
    const prepared = folders.get(call.request.folder);
    if (prepared === undefined) {
      call.emit('error', {
        code: grpc.status.NOT_FOUND,
        details: `no folder ${JSON.stringify(call.request.folder)}`,
      });
      return;
    }
    send(call, pick(prepared)).catch((error: Error) => {
      call.emit('error', { code: grpc.status.INTERNAL, details: error.message });
    });
  };
}

function main(): void {
  const options = parseOptions();
  const packageDefinition = protoLoader.loadSync(options.proto, { keepCase: true });
  const definition = packageDefinition['streambench.StreamBench'] as grpc.ServiceDefinition;
  const strategy = makeStrategy(options.strategy, definition);
  const started = Date.now();
  const folders = new Map([[options.folder.name, strategy.prepare(makeFolder(options.folder))]]);
  const prepared = folders.get(options.folder.name)!;
  console.error(
    `strategy ${options.strategy}: folder ${options.folder.name}, ${prepared.pairs} pairs, ` +
      `${prepared.bytes} bytes as one message, prepared in ${Date.now() - started} ms`,
  );

  const server = new grpc.Server();
  server.addService(strategy.definition, {
    Watch: handler(folders, (p) => [p.mono]),
    WatchSeparated: handler(folders, (p) => p.separated),
  });
  server.bindAsync(`${options.host}:${options.port}`, grpc.ServerCredentials.createInsecure(), (error) => {
    if (error) {
      console.error(`cannot listen on ${options.host}:${options.port}: ${error.message}`);
      process.exit(1);
    }
    process.stdout.write('READY\n');
  });

  const stop = () => {
    // Watchers still streaming are cut off after a short grace: the runner waits 10 s.
    const force = setTimeout(() => server.forceShutdown(), 2000);
    server.tryShutdown(() => {
      clearTimeout(force);
      process.exit(0);
    });
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}

try {
  main();
} catch (error) {
  console.error((error as Error).message);
  process.exit(2);
}
