// The frame of every screen: a skip link, the organization the session acts for with the
// caller's role, switching organization and signing out, the navigation, and the routed page.
import { LocationProvider, Route, Router, useLocation } from 'preact-iso';
import { type Area, AREAS } from './areas.ts';
import { signIn, signOut } from './auth.ts';
import { can } from './roles.ts';
import { useSession } from './session.tsx';
import { Page } from './ui.tsx';

function NotFound() {
  return (
    <Page title="Not found">
      <p>There is no dashboard page here.</p>
    </Page>
  );
}

/** The areas the role (and, for the operator's areas, the organization) may see, under their groups' headings, in AREAS' order. */
function Navigation() {
  const { settings, organization } = useSession();
  const { path } = useLocation();
  const shown = AREAS.filter((a) => (!a.needs || can(organization.role, a.needs)) && (!a.operatorOnly || organization.operator));
  const groups = [...new Set(shown.map((a) => a.group))];
  const current = (a: Area, href: string) => (path === href ? 'page' : a.detail && path.startsWith(`${href}/`) ? 'true' : undefined);
  return (
    <nav aria-label="Dashboard">
      {groups.map((group, i) => (
        <div key={group} class="nav-group">
          <p id={`nav-group-${i}`}>{group}</p>
          <ul aria-labelledby={`nav-group-${i}`}>
            {shown
              .filter((a) => a.group === group)
              .map((a) => {
                const href = `${settings.basePath}${a.path}`;
                return (
                  <li key={a.path}>
                    <a href={href} aria-current={current(a, href)}>
                      {a.label}
                    </a>
                  </li>
                );
              })}
          </ul>
        </div>
      ))}
    </nav>
  );
}

function Header() {
  const { settings, me, organization, memberships } = useSession();
  return (
    <header>
      <p class="brand">Mindgate</p>
      <p class="acting">
        <span>{organization.organization_name}</span> <span class="role">({organization.role})</span>
      </p>
      <button
        type="button"
        onClick={() => void signIn(settings, settings.basePath)}
        title={`You belong to ${memberships.length} organization(s); the sign-in asks which one to act for.`}
      >
        Switch organization
      </button>
      <p class="who">{me.email}</p>
      <button type="button" onClick={() => void signOut(settings)}>
        Sign out
      </button>
    </header>
  );
}

export function Layout() {
  const { settings } = useSession();
  return (
    <LocationProvider>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <Header />
      <div class="frame">
        <Navigation />
        <main id="main" tabIndex={-1}>
          <Router>
            {[
              ...AREAS.map((a) => <Route key={a.path} path={`${settings.basePath}${a.path}`} component={a.page} />),
              ...AREAS.filter((a) => a.detail).map((a) => (
                <Route key={`${a.path}/:id`} path={`${settings.basePath}${a.path}/:id`} component={a.detail!} />
              )),
              <Route key="404" default component={NotFound} />,
            ]}
          </Router>
        </main>
      </div>
    </LocationProvider>
  );
}
