// Onboarding: a new account, its first organization with its brain and plan (a Professional
// trial, or Starter), and the verification e-mail.
import { openOrganization } from '../../organizations.ts';
import { AccountError, type Account } from '../accounts.ts';
import type { InteractionKit } from './kit.ts';

export function signUpInput(form: URLSearchParams) {
  return {
    email: form.get('email') ?? '',
    password: form.get('password') ?? '',
    name: form.get('name') ?? '',
    organization: (form.get('organization') ?? '').trim(),
  };
}

/** Creates the organization with its brain and its plan; returns its id. */
export async function createOrganization(kit: InteractionKit, name: string, ownerUserId: string): Promise<string> {
  return (await openOrganization(kit.app, { name, ownerUserId })).organizationId;
}

async function sendVerification(kit: InteractionKit, user: Account): Promise<void> {
  const token = await kit.accounts.createEmailToken(user.id);
  const link = `${kit.issuer}/verify-email?token=${token}`;
  try {
    await kit.mailer.send({
      to: user.email,
      subject: 'Verify your e-mail address for Mindgate',
      text: `Hello ${user.name},\n\nConfirm that this is your address by opening this link within 24 hours:\n\n${link}\n\nIf you did not create a Mindgate account, ignore this message.\n`,
    });
  } catch (err) {
    kit.app.logger.warn({ err: (err as Error).message }, 'verification mail could not be sent');
  }
}

/** Creates the account and its organization; answers the page itself on a user error. */
export async function signUp(
  kit: InteractionKit,
  form: URLSearchParams,
  render: (error: string, field?: string) => void,
): Promise<Account | undefined> {
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
  await createOrganization(kit, input.organization, user.id);
  await sendVerification(kit, user);
  return user;
}
