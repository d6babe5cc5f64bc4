import { Controller, Get } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { ControlPlane, type WorkerPresence } from '@chronicle/platform';

/** How long a roll call waits for workers to answer over the control plane. */
const ROLL_CALL_WAIT_MS = 500;

// Closed to every key but ADMIN_API_KEY (the access guard checks every /v1/admin route).
@ApiTags('admin')
@Controller('v1/admin')
export class AdminController {
  constructor(private readonly controlPlane: ControlPlane) {}

  @Get('workers')
  @ApiOperation({ summary: 'The live workers: id, app, pid, since, jobs in flight' })
  workers(): Promise<WorkerPresence[]> {
    return this.controlPlane.rollCall(ROLL_CALL_WAIT_MS);
  }
}
