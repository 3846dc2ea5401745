export { OutboxModule } from './outbox.module';
export { EventsRepository } from './events.repository';
export type { EventListFilter } from './events.repository';
export { EventView, EventListView, EVENT_TYPES } from './event.view';
export type { EventType } from './event.view';
