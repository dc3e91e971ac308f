// The REST API's team access to the Brain: narrowing what a team's members (and the API keys
// naming the team) may reach in the organization's memory, and lifting it. The semantics live
// with the data, in the agents service (services/agents/handlers/team-brain-access.ts); the Brain
// enforces them (services/brain/access.ts); docs/api.md "Team access to the Brain" explains them.
import * as z from 'zod';
import { defineApiRoute } from '../http/api-route.ts';
import { sendJson } from '../http/respond.ts';
import { ifMatch, quoteEtag } from './etag.ts';
import { errors, notFoundAs404, readJson, type RestRoute, type RouteDeps } from './rest-route.ts';
import { teamJson, teamParams, withEtag } from './teams.ts';

const KeyPrefix = z.string().regex(/^[A-Za-z0-9._:/-]{1,200}$/, { error: 'must be 1-200 characters of a memory key ([A-Za-z0-9._:/-])' });

export const SetBrainAccessSchema = z
  .object({
    namespaces: z
      .array(z.enum(['knowledge', 'episodes']))
      .min(1, { error: 'must name "knowledge" and/or "episodes"' })
      .max(2)
      .meta({ description: 'The namespaces the team may reach: "knowledge" and/or "episodes".' }),
    key_prefixes: z
      .array(KeyPrefix)
      .max(50)
      .optional()
      .meta({ description: 'The team may reach keys starting with one of these; leave out (or empty) for every key.' }),
  })
  .strict()
  .meta({
    title: 'SetBrainAccess',
    examples: [{ namespaces: ['knowledge'], key_prefixes: ['support/', 'runbooks/'] }],
  });

const path = '/organizations/:organization_id/teams/:team_id/brain-access';
const tags = ['Teams'];

function setTeamBrainAccessRoute({ ctx, limit }: RouteDeps): RestRoute {
  return {
    ...defineApiRoute({
      method: 'PUT',
      path,
      operationId: 'setTeamBrainAccess',
      summary: "Narrow a team's access to the Brain",
      description:
        'Replaces what the team may reach in the Brain: memories of the listed namespaces whose keys start with one of the prefixes. Members of narrowed teams reach what one of their narrowed teams allows; API keys naming the team reach what it allows. Searches, recall and fetches then return only those memories, and writes outside are refused. With If-Match, only if the team is still at that ETag (412 otherwise).',
      tags,
      params: teamParams,
      responses: {
        '200': withEtag('The team, as stored.'),
        '401': errors['401'],
        '403': errors['403'],
        '404': 'NotFound',
        '412': 'PreconditionFailed',
        '422': errors['422'],
      },
      handler: async (c) => {
        const etag = ifMatch(c.req.headers['if-match']);
        const body = await readJson(c, SetBrainAccessSchema, limit);
        const { organization_id: organizationId, team_id: teamId } = c.input.params;
        const brainAccess = { namespaces: body.namespaces, keyPrefixes: body.key_prefixes ?? [] };
        const { team } = await notFoundAs404(() => ctx.clients.teams.setTeamBrainAccess({ organizationId, teamId, brainAccess, etag }));
        sendJson(c.res, 200, teamJson(team!), { etag: quoteEtag(team!.etag) });
      },
    }),
    body: SetBrainAccessSchema,
  };
}

function deleteTeamBrainAccessRoute({ ctx }: RouteDeps): RestRoute {
  return defineApiRoute({
    method: 'DELETE',
    path,
    operationId: 'deleteTeamBrainAccess',
    summary: "Lift a team's Brain restriction",
    description:
      'The team no longer narrows anything: its members reach what their other narrowed teams allow (everything when none is), its API keys reach the whole Brain. With If-Match, only if the team is still at that ETag.',
    tags,
    params: teamParams,
    responses: {
      '204': { description: 'Lifted.' },
      '401': errors['401'],
      '403': errors['403'],
      '404': 'NotFound',
      '412': 'PreconditionFailed',
      '422': errors['422'],
    },
    handler: async (c) => {
      const etag = ifMatch(c.req.headers['if-match']);
      const { organization_id: organizationId, team_id: teamId } = c.input.params;
      await notFoundAs404(() => ctx.clients.teams.setTeamBrainAccess({ organizationId, teamId, etag }));
      c.res.writeHead(204).end();
    },
  });
}

export function teamBrainAccessRoutes(deps: RouteDeps): RestRoute[] {
  return [setTeamBrainAccessRoute(deps), deleteTeamBrainAccessRoute(deps)];
}
