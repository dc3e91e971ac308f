// Loads our protos for @grpc/grpc-js, an independent gRPC implementation.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

export function loadGrpcPackage(file: string): grpc.GrpcObject {
  const definition = protoLoader.loadSync(file, {
    includeDirs: [path.join(root, 'proto'), path.join(root, 'vendor/proto')],
    keepCase: false,
    longs: String,
    enums: String,
    defaults: true,
    oneofs: true,
  });
  return grpc.loadPackageDefinition(definition);
}

/** The client constructor of `service` (for example `mindgate.brain.v1.BrainService`) in `file`. */
export function loadServiceClient(file: string, service: string): grpc.ServiceClientConstructor {
  let node: unknown = loadGrpcPackage(file);
  for (const part of service.split('.')) node = (node as grpc.GrpcObject)[part];
  if (typeof node !== 'function') throw new Error(`${service} is not a service of ${file}`);
  return node as grpc.ServiceClientConstructor;
}

/** Promisified unary call on a grpc-js client. */
export function unary<Res>(client: grpc.Client, method: string, request: unknown, metadata: Record<string, string> = {}): Promise<Res> {
  const md = new grpc.Metadata();
  for (const [k, v] of Object.entries(metadata)) md.set(k, v);
  return new Promise((resolve, reject) => {
    (client as unknown as Record<string, (...args: unknown[]) => void>)[method](request, md, (err: grpc.ServiceError | null, res: Res) =>
      err ? reject(err) : resolve(res),
    );
  });
}

export { grpc };
