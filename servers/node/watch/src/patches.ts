// The two strategies that change how grpc-js frames a message, as the seed's frame-cache
// and protobuf-cache-2writes branches changed grpc-js itself. Here the change is applied
// at start to grpc-js's server call class, and only for message objects of the classes
// below: any other message takes grpc-js's own path unchanged.
import { BaseServerInterceptingCall } from '@grpc/grpc-js/build/src/server-interceptors';
import { status } from '@grpc/grpc-js';

/** A message already in gRPC's length-prefixed form: 1 flag byte, 4 length bytes, body. */
export class FramedMessage {
  constructor(readonly frame: Buffer) {}
}

/** A serialized message and its 5-byte gRPC prefix, written to the stream one after the other. */
export class TwoPartMessage {
  constructor(
    readonly prefix: Buffer,
    readonly body: Buffer,
  ) {}
}

export function grpcPrefix(bodyLength: number): Buffer {
  const prefix = Buffer.alloc(5);
  prefix.writeUInt8(0, 0); // not compressed
  prefix.writeUInt32BE(bodyLength, 1);
  return prefix;
}

export function frame(body: Buffer): Buffer {
  return Buffer.concat([grpcPrefix(body.length), body]);
}

// grpc-js's call internals this module relies on (private in its typings).
interface CallInternals {
  serializeMessage(value: unknown): Buffer;
  sendMessage(message: unknown, callback: () => void): void;
  checkCancelled(): boolean;
  maybeSendMetadata(): void;
  sendStatus(value: { code: status; details: string; metadata: null }): void;
  stream: { write(chunk: Buffer, callback?: (error?: Error | null) => void): boolean };
  callEventTracker?: { addMessageSent(): void };
}

const proto = BaseServerInterceptingCall.prototype as unknown as CallInternals;
let patched = '';

/** frame_cache: a FramedMessage is sent as it is, without a new buffer and a copy per call. */
export function useFrameCache(): void {
  if (patched) return;
  patched = 'frame_cache';
  const original = proto.serializeMessage;
  proto.serializeMessage = function (this: CallInternals, value: unknown): Buffer {
    return value instanceof FramedMessage ? value.frame : original.call(this, value);
  };
}

/** protobuf_cache_2writes: the prefix and the cached body go out as two writes, no copy. */
export function useTwoWrites(): void {
  if (patched) return;
  patched = 'protobuf_cache_2writes';
  const original = proto.sendMessage;
  proto.sendMessage = function (this: CallInternals, message: unknown, callback: () => void): void {
    if (!(message instanceof TwoPartMessage)) {
      original.call(this, message, callback);
      return;
    }
    if (this.checkCancelled()) return;
    this.maybeSendMetadata();
    this.stream.write(message.prefix);
    this.stream.write(message.body, (error) => {
      if (error) {
        this.sendStatus({
          code: status.INTERNAL,
          details: `Error writing message: ${error.message}`,
          metadata: null,
        });
        return;
      }
      this.callEventTracker?.addMessageSent();
      callback();
    });
  };
}
