#!/usr/bin/env python3
"""Adds lockfile entries for the platform packages of @bufbuild/buf and @biomejs/biome that this
workplace's npm registry does not serve (macOS, Windows, armv7, musl, Android). `npm install` then
leaves them out of package-lock.json, and `npm ci` refuses the lockfile as out of sync. The entries
are optional and platform-restricted, so npm never fetches them on Linux x64/arm64 (glibc); on
those platforms the real registry serves them."""
import json, pathlib

# package that pulls the binaries -> (prefix of each binary package, license, node engine,
# {suffix: (os, cpu, libc or None)})
BINARIES = {
    '@bufbuild/buf': ('@bufbuild/buf-', 'Apache-2.0', '>=12', {
        'darwin-arm64': ('darwin', 'arm64', None), 'darwin-x64': ('darwin', 'x64', None),
        'linux-armv7': ('linux', 'arm', None), 'win32-arm64': ('win32', 'arm64', None),
        'win32-x64': ('win32', 'x64', None),
    }),
    '@biomejs/biome': ('@biomejs/cli-', 'MIT OR Apache-2.0', '>=14.21.3', {
        'android-arm64': ('android', 'arm64', None), 'android-x64': ('android', 'x64', None),
        'darwin-arm64': ('darwin', 'arm64', None), 'darwin-x64': ('darwin', 'x64', None),
        'linux-arm64-musl': ('linux', 'arm64', 'musl'), 'linux-x64-musl': ('linux', 'x64', 'musl'),
        'win32-arm64': ('win32', 'arm64', None), 'win32-x64': ('win32', 'x64', None),
    }),
}
path = pathlib.Path(__file__).resolve().parent.parent / 'package-lock.json'
lock = json.loads(path.read_text())
packages = lock['packages']
for parent, (prefix, license_, node, platforms) in BINARIES.items():
    if f'node_modules/{parent}' not in packages:
        continue
    version = packages[f'node_modules/{parent}']['version']
    for suffix, (os_name, cpu, libc) in platforms.items():
        entry = {'version': version, 'cpu': [cpu], 'dev': True}
        if libc:
            entry['libc'] = [libc]
        entry.update({'license': license_, 'optional': True, 'os': [os_name], 'engines': {'node': node}})
        packages.setdefault(f'node_modules/{prefix}{suffix}', entry)
lock['packages'] = dict(sorted(packages.items(), key=lambda kv: (kv[0] != '', kv[0])))
path.write_text(json.dumps(lock, indent=2) + '\n')
