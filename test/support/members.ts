// Members with a given role in an organization, for tests of the Agents API: a new user signs
// up (getting an organization of their own), is added to the organization through the agents
// service, and signs in again choosing that organization, which gives a token acting for it.
import { decodeJwt } from 'jose';
import { ROLE_ENUM, type RoleName } from '../../edge/api/access.ts';
import { obtainAccessToken, type ObtainedToken } from './oauth-client.ts';
import type { TestPlatform } from './platform.ts';

export interface TestMember extends ObtainedToken {
  userId: string;
}

export async function joinAs(platform: TestPlatform, organizationId: string, role: RoleName): Promise<TestMember> {
  const resource = platform.ctx.config.publicUrls.api;
  const own = await obtainAccessToken(platform, { resource });
  const userId = decodeJwt(own.access_token).sub!;
  await platform.ctx.clients.organizations.addMember({ organizationId, userId, role: ROLE_ENUM[role] });
  const token = await obtainAccessToken(platform, { resource, user: own.user, mode: 'sign-in', organizationId, client: own.client });
  return { ...token, userId };
}

export function userIdOf(token: ObtainedToken): string {
  return decodeJwt(token.access_token).sub!;
}
