import { startTestCloud } from '@smarthome/cloud/testing/harness';
import { ATTIC, DESK, HALL, PORCH, type World } from './world-model.ts';
import { usersAndOrganizations } from './world-people.ts';
import { edgesAndLamps } from './world-edges.ts';
import { cloudResources } from './world-resources.ts';
import { foreignAdminShares, formerAdminOfO } from './world-cross-org.ts';

// The matrix's files import the world's vocabulary from here, as before the build was split.
export {
  ACTOR_NAMES,
  ATTIC,
  BOARD_CONFIG,
  DESK,
  HALL,
  MEDIA_URI,
  PORCH,
  type Actor,
  type ActorName,
  type Lamp,
  type World,
} from './world-model.ts';

/** Builds the world (world-model.ts) step by step, in this order: each step's requests see what the steps before made. */
export async function buildWorld(): Promise<World> {
  const cleanups: World['cleanups'] = [];
  const cloud = await startTestCloud();
  cleanups.push(() => cloud.stop());
  const { users, O, OB, invitation, actors } = await usersAndOrganizations(cloud);
  const { A } = users;
  const edges = await edgesAndLamps(cloud, cleanups, users, O);
  const { edgeA, edgeO, edgeX, desk, attic, hall, porch, autoA, autoO } = edges;
  const { a, m, o } = await cloudResources(cloud, users, O, invitation, edges);
  const { xBoard, xMadeForO, OX } = await formerAdminOfO(cloud, users, O);
  await foreignAdminShares(cloud, users.B, OB, a.deskDevice);

  return {
    cloud,
    users,
    O,
    OB,
    OX,
    actors,
    cleanups,
    xBoard,
    xMadeForO,
    edges: { A: edgeA, O: edgeO, X: edgeX },
    lamps: { desk, attic, hall, porch },
    a,
    o,
    m,
    markers: {
      personal: [
        'mx A zone',
        'mx A transfer zone',
        'mx A private board',
        'mx A sip',
        'mx A home',
        'mx A pat',
        'mx A transfer',
        'mx A demo',
        'mx A automation',
        'mx-secret-A',
        autoA.webhook_id,
        a.subscription,
        ATTIC,
        'MxAtticCo',
        'MxDeskCo',
      ],
      formerAdmin: ['mx X home', 'mx X board', PORCH, 'MxPorchCo'],
      shared: ['mx A shared board', DESK],
      org: [
        'mx O org',
        'mx O zone',
        'mx O board',
        'mx O sip',
        'mx O home',
        'mx O demo',
        'mx O automation',
        autoO.webhook_id,
        HALL,
        'MxHallCo',
        A.email,
        A.id,
        'mx X-made O zone',
        'mx X-made O board',
        'mx X-made O edge',
      ],
      // what O's members never see: a secret in an automation (shown to them redacted), the admins' invitations
      adminOnly: ['mx-secret-O', 'mx-invitee@example.test'],
      memberPersonal: ['mx M zone', 'mx M board', 'mx M sip', 'mx M pat', 'mx M home'],
    },
  };
}
