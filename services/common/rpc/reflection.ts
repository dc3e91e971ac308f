// gRPC server reflection (v1 and v1alpha) over the descriptors that protobuf-es generated, so
// that grpcurl and other reflection clients can list, describe and call our services.
import { create, toBinary, type DescFile, type DescService } from '@bufbuild/protobuf';
import { FileDescriptorProtoSchema } from '@bufbuild/protobuf/wkt';
import { Code, ConnectError, type ConnectRouter } from '@connectrpc/connect';
import * as v1 from '../../../gen/grpc/reflection/v1/reflection_pb.js';
import * as v1alpha from '../../../gen/grpc/reflection/v1alpha/reflection_pb.js';
import { Health } from '../../../gen/grpc/health/v1/health_pb.js';

type ReflectionApi = typeof v1 | typeof v1alpha;

/** Index of files and symbols reachable from the served services. */
class DescriptorIndex {
  readonly serviceNames: string[];
  private readonly files = new Map<string, DescFile>();
  private readonly symbols = new Map<string, DescFile>();

  constructor(services: DescService[]) {
    this.serviceNames = services.map((s) => s.typeName);
    for (const service of services) this.addFile(service.file);
  }

  private addFile(file: DescFile): void {
    if (this.files.has(file.proto.name)) return;
    this.files.set(file.proto.name, file);
    for (const dep of file.dependencies) this.addFile(dep);
    for (const service of file.services) {
      this.symbols.set(service.typeName, file);
      for (const method of service.methods) this.symbols.set(`${service.typeName}.${method.name}`, file);
    }
    const addMessages = (messages: DescFile['messages']) => {
      for (const message of messages) {
        this.symbols.set(message.typeName, file);
        for (const field of message.fields) this.symbols.set(`${message.typeName}.${field.name}`, file);
        for (const nestedEnum of message.nestedEnums) this.symbols.set(nestedEnum.typeName, file);
        addMessages(message.nestedMessages);
      }
    };
    addMessages(file.messages);
    for (const e of file.enums) this.symbols.set(e.typeName, file);
    for (const ext of file.extensions) this.symbols.set(ext.typeName, file);
  }

  fileByName(name: string): DescFile | undefined {
    return this.files.get(name);
  }

  fileBySymbol(symbol: string): DescFile | undefined {
    return this.symbols.get(symbol.replace(/^\./, ''));
  }

  /** The file and everything it imports, each serialized once, the requested file first. */
  closure(file: DescFile): Uint8Array[] {
    const seen = new Set<string>();
    const out: Uint8Array[] = [];
    const visit = (f: DescFile) => {
      if (seen.has(f.proto.name)) return;
      seen.add(f.proto.name);
      out.push(toBinary(FileDescriptorProtoSchema, f.proto));
      for (const dep of f.dependencies) visit(dep);
    };
    visit(file);
    return out;
  }
}

function registerVersion(router: ConnectRouter, api: ReflectionApi, index: DescriptorIndex): void {
  // Both versions share one message layout; the casts only bridge their distinct generated types.
  const respond = (req: v1.ServerReflectionRequest, response: v1.ServerReflectionResponse['messageResponse']) =>
    create(api.ServerReflectionResponseSchema as typeof v1.ServerReflectionResponseSchema, {
      validHost: req.host,
      originalRequest: req,
      messageResponse: response,
    });
  const notFound = (req: v1.ServerReflectionRequest, message: string) =>
    respond(req, {
      case: 'errorResponse',
      value: create(v1.ErrorResponseSchema, { errorCode: Code.NotFound, errorMessage: message }),
    });
  const files = (req: v1.ServerReflectionRequest, file: DescFile | undefined, what: string) =>
    file
      ? respond(req, {
          case: 'fileDescriptorResponse',
          value: create(v1.FileDescriptorResponseSchema, { fileDescriptorProto: index.closure(file) }),
        })
      : notFound(req, `${what} not found`);

  router.service(api.ServerReflection as typeof v1.ServerReflection, {
    async *serverReflectionInfo(requests: AsyncIterable<v1.ServerReflectionRequest>) {
      for await (const req of requests) {
        const m = req.messageRequest;
        switch (m.case) {
          case 'listServices':
            yield respond(req, {
              case: 'listServicesResponse',
              value: create(v1.ListServiceResponseSchema, {
                service: index.serviceNames.map((name) => create(v1.ServiceResponseSchema, { name })),
              }),
            });
            break;
          case 'fileByFilename':
            yield files(req, index.fileByName(m.value), `file "${m.value}"`);
            break;
          case 'fileContainingSymbol':
            yield files(req, index.fileBySymbol(m.value), `symbol "${m.value}"`);
            break;
          case 'fileContainingExtension':
            yield notFound(req, `extension ${m.value.extensionNumber} of "${m.value.containingType}" not found`);
            break;
          case 'allExtensionNumbersOfType': {
            if (!index.fileBySymbol(m.value)) {
              yield notFound(req, `type "${m.value}" not found`);
              break;
            }
            yield respond(req, {
              case: 'allExtensionNumbersResponse',
              value: create(v1.ExtensionNumberResponseSchema, { baseTypeName: m.value, extensionNumber: [] }),
            });
            break;
          }
          default:
            throw new ConnectError('empty reflection request', Code.InvalidArgument);
        }
      }
    },
  });
}

/**
 * Serves grpc.reflection.v1 and v1alpha for `services` (plus health and reflection themselves,
 * which grpcurl lists as well).
 */
export function registerReflection(router: ConnectRouter, services: DescService[]): void {
  const index = new DescriptorIndex([...services, Health, v1.ServerReflection, v1alpha.ServerReflection]);
  registerVersion(router, v1, index);
  registerVersion(router, v1alpha, index);
}
