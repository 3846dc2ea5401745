import { Controller, Get, Param, Query, UseGuards } from '@nestjs/common';
import {
  ApiBearerAuth,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
  ApiUnauthorizedResponse,
} from '@nestjs/swagger';
import { EventListView, EventsRepository, EventView } from '@ledgerkey/outbox';
import { ApiKeyGuard, type Company, CurrentCompany } from '@ledgerkey/tenancy';
import { DEFAULT_PAGE_SIZE, ListQueryDto } from '../list-query.dto';
import { ResourceIdPipe, ResourceNotFoundError } from '../resource-id.pipe';

@ApiTags('Events')
@ApiBearerAuth()
@ApiUnauthorizedResponse({ description: 'Missing or unknown API key (`unauthorized`)' })
@UseGuards(ApiKeyGuard)
@Controller('v1/events')
export class EventsController {
  constructor(private readonly events: EventsRepository) {}

  @Get()
  @ApiOperation({
    operationId: 'listEvents',
    summary: 'Events in commit order',
    description:
      'One event per created document, written in the same transaction; a replayed request emits ' +
      'none. An event is listed as soon as its transaction commits; order is commit order per ' +
      'company. Page with `startingAfter` (the last event id you processed): no event is ever ' +
      'skipped, because an event that commits later always sorts after every event already listed. ' +
      "Other companies' transactions never delay your feed.",
  })
  @ApiOkResponse({ type: EventListView })
  async list(@Query() query: ListQueryDto, @CurrentCompany() company: Company): Promise<EventListView> {
    const page = await this.events.list(company.id, query.limit ?? DEFAULT_PAGE_SIZE, query.startingAfter);
    return { object: 'list', ...page };
  }

  @Get(':id')
  @ApiOperation({ operationId: 'getEvent', summary: 'Retrieve an event' })
  @ApiOkResponse({ type: EventView })
  @ApiNotFoundResponse({ description: '`not_found`' })
  async get(@Param('id', ResourceIdPipe) id: string, @CurrentCompany() company: Company): Promise<EventView> {
    const event = await this.events.findById(company.id, id);
    if (!event) throw new ResourceNotFoundError();
    return event;
  }
}
