// The four cache strategies of the seed. Each holds the same folder and answers with the
// same bytes; they differ only in what is kept ready and what is done per call:
//   js_object               JS objects; protobufjs serializes them on every call (seed: main)
//   protobuf_cache          protobuf bytes made once at start; grpc-js still copies each
//                           into a new length-prefixed buffer per call (seed: protobuf-cache)
//   frame_cache             the length-prefixed gRPC message made once; sent as it is
//                           (seed: frame-cache)
//   protobuf_cache_2writes  protobuf bytes made once; prefix and body written separately,
//                           so no per-call buffer or copy (seed: protobuf-cache-2writes)
import type * as grpc from '@grpc/grpc-js';
import type { KV } from './folder';
import { FramedMessage, TwoPartMessage, frame, grpcPrefix, useFrameCache, useTwoWrites } from './patches';

export const STRATEGIES = ['js_object', 'protobuf_cache', 'frame_cache', 'protobuf_cache_2writes'] as const;
export type StrategyName = (typeof STRATEGIES)[number];

/** What a folder's watchers are sent: one message for Watch, N for WatchSeparated. */
export interface Prepared {
  mono: unknown;
  separated: unknown[];
  pairs: number;
  bytes: number; // protobuf bytes of the mono message
}

type Serialize = (value: unknown) => Buffer;

function passThrough(value: unknown): Buffer {
  return value as Buffer;
}

export interface Strategy {
  definition: grpc.ServiceDefinition;
  prepare(pairs: KV[]): Prepared;
}

/** definition: proto-loader's service definition (protobufjs serializers). */
export function makeStrategy(name: StrategyName, definition: grpc.ServiceDefinition): Strategy {
  const encodeMono = definition.Watch.responseSerialize as Serialize;
  const encodeSeparated = definition.WatchSeparated.responseSerialize as Serialize;
  const objects = (pairs: KV[]) => ({
    mono: { kv: pairs },
    separated: pairs.map((kv, i) => ({ part: i + 1, parts: pairs.length, kv })),
  });
  if (name === 'js_object') {
    return {
      definition,
      prepare(pairs) {
        const { mono, separated } = objects(pairs);
        return { mono, separated, pairs: pairs.length, bytes: encodeMono(mono).length };
      },
    };
  }
  // The cached strategies serialize once with the same protobufjs code, then hand the bytes
  // to grpc-js with a serializer that passes them through.
  const cached: grpc.ServiceDefinition = {
    Watch: { ...definition.Watch, responseSerialize: passThrough },
    WatchSeparated: { ...definition.WatchSeparated, responseSerialize: passThrough },
  };
  let wrap: (body: Buffer) => unknown = (body) => body;
  if (name === 'frame_cache') {
    useFrameCache();
    wrap = (body) => new FramedMessage(frame(body));
  } else if (name === 'protobuf_cache_2writes') {
    useTwoWrites();
    wrap = (body) => new TwoPartMessage(grpcPrefix(body.length), body);
  }
  return {
    definition: cached,
    prepare(pairs) {
      const { mono, separated } = objects(pairs);
      const body = encodeMono(mono);
      return {
        mono: wrap(body),
        separated: separated.map((message) => wrap(encodeSeparated(message))),
        pairs: pairs.length,
        bytes: body.length,
      };
    },
  };
}
