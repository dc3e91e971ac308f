// Binding a listening socket, with a failure an operator can act on: a port in use, a privileged
// port or an address this machine does not have is one line naming the port and its setting.
import type net from 'node:net';
import { StartRefusedError, systemReason } from './start-refusal.ts';

export interface ListenTarget {
  host: string;
  port: number;
  /** The settings that chose host and port (GATEWAY_PORT, HOST...), named when binding fails. */
  settings?: { host: string; port: string };
}

function refusal(err: NodeJS.ErrnoException, target: ListenTarget): Error {
  const portSetting = target.settings?.port ?? 'port';
  const hostSetting = target.settings?.host ?? 'host';
  const where = `${target.host}:${target.port}`;
  switch (err.code) {
    case 'EADDRINUSE':
      return new StartRefusedError(
        `${portSetting}: port ${target.port} on ${target.host} is already in use (by another process)`,
        undefined,
        {
          cause: err,
        },
      );
    case 'EACCES':
      return new StartRefusedError(`${portSetting}: not allowed to listen on ${where} (ports below 1024 need privileges)`, undefined, {
        cause: err,
      });
    case 'EADDRNOTAVAIL':
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return new StartRefusedError(`${hostSetting}: cannot listen on ${where}: this machine has no such address`, undefined, {
        cause: err,
      });
    default:
      return new StartRefusedError(`${portSetting}: cannot listen on ${where} (${systemReason(err)})`, undefined, { cause: err });
  }
}

/** Listens on host:port; resolves once bound, rejects with a StartRefusedError naming the setting. */
export function listen(server: net.Server, target: ListenTarget): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const failed = (err: NodeJS.ErrnoException) => reject(refusal(err, target));
    server.once('error', failed);
    server.listen(target.port, target.host, () => {
      server.off('error', failed);
      resolve();
    });
  });
}
