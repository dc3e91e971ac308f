#!/usr/bin/env python3
"""Adds lockfile entries for @bufbuild/buf's platform packages that this workplace's npm
registry does not serve (macOS, Windows, armv7). `npm install` then leaves them out of
package-lock.json, and `npm ci` refuses the lockfile as out of sync. The entries are optional
and platform-restricted, so npm never fetches them on Linux x64/arm64; on those platforms the
real registry serves them."""
import json, pathlib

PLATFORMS = {
    'darwin-arm64': ('darwin', 'arm64'), 'darwin-x64': ('darwin', 'x64'),
    'linux-armv7': ('linux', 'arm'), 'win32-arm64': ('win32', 'arm64'), 'win32-x64': ('win32', 'x64'),
}
path = pathlib.Path(__file__).resolve().parent.parent / 'package-lock.json'
lock = json.loads(path.read_text())
packages = lock['packages']
version = packages['node_modules/@bufbuild/buf']['version']
for suffix, (os_name, cpu) in PLATFORMS.items():
    packages.setdefault(f'node_modules/@bufbuild/buf-{suffix}', {
        'version': version, 'cpu': [cpu], 'dev': True, 'license': 'Apache-2.0',
        'optional': True, 'os': [os_name], 'engines': {'node': '>=12'},
    })
lock['packages'] = dict(sorted(packages.items(), key=lambda kv: (kv[0] != '', kv[0])))
path.write_text(json.dumps(lock, indent=2) + '\n')
