import { runService } from '../common/run-service.ts';

await runService('agents');
