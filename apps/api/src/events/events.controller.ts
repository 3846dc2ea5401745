import { Controller, Get, Param, Query, UseGuards } from '@nestjs/common';
import { IsIn, IsOptional } from 'class-validator';
import {
  ApiBearerAuth,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiPropertyOptional,
  ApiTags,
  ApiUnauthorizedResponse,
} from '@nestjs/swagger';
import {
  EVENT_TYPES,
  type EventListFilter,
  EventListView,
  EventsRepository,
  type EventType,
  EventView,
} from '@ledgerkey/outbox';
import { ApiKeyGuard, type Company, CurrentCompany } from '@ledgerkey/tenancy';
import { ListQueryDto } from '../list-query.dto';
import { ResourceIdPipe, ResourceNotFoundError } from '../resource-id.pipe';

/** `GET /v1/events`: pagination plus filters. */
export class EventListQueryDto extends ListQueryDto {
  @ApiPropertyOptional({ enum: EVENT_TYPES, description: 'Only events of this type' })
  @IsOptional()
  @IsIn(EVENT_TYPES, { message: `type must be one of ${EVENT_TYPES.join(', ')}` })
  type?: EventType;

  override filter(): EventListFilter {
    return { type: this.type };
  }
}

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
      'company. Page with `startingAfter` (the last event id you processed) in the default `asc` order: no ' +
      'event is ever skipped, because an event that commits later always sorts after every event already ' +
      'listed (`order=desc` shows the newest first, for browsing). ' +
      "Other companies' transactions never delay your feed.",
  })
  @ApiOkResponse({ type: EventListView })
  async list(@Query() query: EventListQueryDto, @CurrentCompany() company: Company): Promise<EventListView> {
    const page = await this.events.list(company.id, query.page(), query.filter());
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
