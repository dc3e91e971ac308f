// Who a member is: the name and e-mail address of each member's account, joined onto the
// memberships and team memberships the service answers, so that a client listing members can
// name people without reading every account. The accounts are this service's own (auth_users),
// read in one batch per page.
import type { RecordCollection } from '../../common/storage/records/interface.ts';
import type { UserRecord } from './users.ts';

interface Named {
  userId: string;
  userName: string;
  userEmail: string;
}

/** Fills in `userName` and `userEmail` of each item from its account (left empty when it is gone). */
export async function withAccounts<T extends Named>(users: RecordCollection<UserRecord>, items: T[]): Promise<T[]> {
  if (items.length === 0) return items;
  const accounts = new Map((await users.getMany([...new Set(items.map((i) => i.userId))])).map((u) => [u._id, u]));
  for (const item of items) {
    const account = accounts.get(item.userId);
    item.userName = account?.name ?? '';
    item.userEmail = account?.email ?? '';
  }
  return items;
}
