// Onboarding: a new account, its first organization with its brain and plan (a Professional
// trial, or Starter), and the verification e-mail.
import { openOrganization } from '../../organizations.ts';
import { AccountError, type Account } from '../accounts.ts';
import type { RouteContext } from '../../http/router.ts';
import type { InteractionKit } from './kit.ts';

export function signUpInput(form: URLSearchParams) {
  return {
    email: form.get('email') ?? '',
    password: form.get('password') ?? '',
    name: form.get('name') ?? '',
    organization: (form.get('organization') ?? '').trim(),
  };
}

/**
 * Creates the organization with its brain and its plan, and records it in the new organization's
 * audit log: as the sign-up (`signUp`) or as created at consent (`createOrganization`). Returns its id.
 */
export async function createOrganization(
  kit: InteractionKit,
  c: RouteContext,
  input: { name: string; owner: Account; source: 'sign-up' | 'consent' },
): Promise<string> {
  const { organizationId } = await openOrganization(kit.app, { name: input.name, ownerUserId: input.owner.id });
  await kit.recordStep(c, {
    organizationId,
    userId: input.owner.id,
    action: input.source === 'sign-up' ? 'signUp' : 'createOrganization',
    target: `/organizations/${organizationId}`,
    details: { source: input.source, role: 'owner', ...(input.source === 'sign-up' ? { email: input.owner.email } : {}) },
  });
  return organizationId;
}

/** How the verification e-mail went: delivered, queued for a retry, or not even written. */
export type VerificationMail = 'sent' | 'queued' | 'failed';

async function sendVerification(kit: InteractionKit, user: Account): Promise<VerificationMail> {
  try {
    const token = await kit.accounts.createEmailToken(user.id);
    const link = `${kit.issuer}/verify-email?token=${token}`;
    const { status } = await kit.app.mail.send({
      purpose: 'verification',
      to: user.email,
      subject: 'Verify your e-mail address for Mindgate',
      text: `Hello ${user.name},\n\nConfirm that this is your address by opening this link within 24 hours:\n\n${link}\n\nIf you did not create a Mindgate account, ignore this message.\n`,
    });
    return status;
  } catch (err) {
    // The account stands; the page says the link could not be sent.
    kit.app.logger.error({ err: (err as Error).message, userId: user.id }, 'verification mail could not be queued');
    return 'failed';
  }
}

/** What the page says about the verification e-mail. */
export function verificationNotice(email: string, mail: VerificationMail): string {
  if (mail === 'sent') return `We sent a verification link to ${email}.`;
  if (mail === 'queued') return `We could not send the verification link to ${email} yet; we will keep trying for a few hours.`;
  return `We could not send a verification link to ${email}. You can still sign in.`;
}

/** Creates the account and its organization; answers the page itself on a user error. */
export async function signUp(
  kit: InteractionKit,
  c: RouteContext,
  form: URLSearchParams,
  render: (error: string, field?: string) => void,
): Promise<{ user: Account; mail: VerificationMail } | undefined> {
  const input = signUpInput(form);
  if (!input.organization || input.organization.length > 200) {
    render('Enter an organization name of at most 200 characters.', 'organization');
    return undefined;
  }
  let user: Account;
  try {
    user = await kit.accounts.signUp(input);
  } catch (err) {
    if (err instanceof AccountError) {
      render(err.message, err.field);
      return undefined;
    }
    throw err;
  }
  await createOrganization(kit, c, { name: input.organization, owner: user, source: 'sign-up' });
  return { user, mail: await sendVerification(kit, user) };
}
