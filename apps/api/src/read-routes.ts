import { Get, Param, Query, type Type } from '@nestjs/common';
import { ApiNotFoundResponse, ApiOkResponse, ApiOperation } from '@nestjs/swagger';
import type { PageRequest } from '@ledgerkey/database';
import { type Company, CurrentCompany } from '@ledgerkey/tenancy';
import { ListQueryDto } from './list-query.dto';
import { ResourceIdPipe } from './resource-id.pipe';

/** The read side a resource's routes call, as the libs' `*Queries` classes offer it. */
export interface ResourceQueries<View, ListView> {
  /** @throws a domain error with code `not_found` when the id is unknown in this company */
  get(companyId: string, id: string): Promise<View>;
  list(companyId: string, page: PageRequest, filter: never): Promise<ListView>;
}

export interface ReadRoutesOptions<View, ListView> {
  view: Type<View>;
  listView: Type<ListView>;
  get: { operationId: string; summary: string; notFound: string };
  list: {
    operationId: string;
    summary: string;
    /** The list's query: `ListQueryDto` or a subclass with the list's filters. */
    query?: Type<ListQueryDto>;
  };
}

/**
 * A base for a resource's controller: `GET :id` and `GET` (a page with `?limit=`, a cursor,
 * `order` and the list's filters) answered by the controller's `queries`. A new class per call,
 * so every controller's routes carry their own OpenAPI metadata and query class; a controller's
 * own routes (its create) come first.
 */
export function ReadRoutes<View, ListView>(options: ReadRoutesOptions<View, ListView>) {
  abstract class ResourceReadRoutes {
    protected abstract readonly queries: ResourceQueries<View, ListView>;

    @Get(':id')
    @ApiOperation({ operationId: options.get.operationId, summary: options.get.summary })
    @ApiOkResponse({ type: options.view })
    @ApiNotFoundResponse({ description: options.get.notFound })
    get(@Param('id', ResourceIdPipe) id: string, @CurrentCompany() company: Company): Promise<View> {
      return this.queries.get(company.id, id);
    }

    @Get()
    @ApiOperation({ operationId: options.list.operationId, summary: options.list.summary })
    @ApiOkResponse({ type: options.listView })
    list(@Query() query: ListQueryDto, @CurrentCompany() company: Company): Promise<ListView> {
      return this.queries.list(company.id, query.page(), query.filter() as never);
    }
  }
  // The parameter's declared type is what the validation pipe instantiates and validates, and
  // what the OpenAPI document lists: this resource's query class rather than the base.
  const parameterTypes = Reflect.getMetadata(
    'design:paramtypes',
    ResourceReadRoutes.prototype,
    'list',
  ) as unknown[];
  Reflect.defineMetadata(
    'design:paramtypes',
    [options.list.query ?? ListQueryDto, ...parameterTypes.slice(1)],
    ResourceReadRoutes.prototype,
    'list',
  );
  return ResourceReadRoutes;
}
