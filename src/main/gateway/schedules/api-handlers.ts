import { ApiFailure, type ApiHandlers } from '../api/server';
import { ScheduleInputError, type Schedules } from './schedules';

type ScheduleHandlers = Pick<ApiHandlers, 'listSchedules' | 'addSchedule' | 'updateSchedule' | 'removeSchedule' | 'runScheduleNow'>;

/** The API's schedule methods; a schedule that cannot be made as asked is a bad request, in words. */
export function scheduleApiHandlers(deps: { readonly schedules: () => Schedules; readonly zone: () => string; readonly ready: () => Promise<void> }): ScheduleHandlers {
  return {
    listSchedules: () => ({ schedules: deps.schedules().list(), zone: deps.zone() }),
    addSchedule: async (params) => {
      await deps.ready();
      const { via, ...schedule } = params;
      return asked(() => deps.schedules().add(schedule, via ?? 'window'));
    },
    updateSchedule: (params) => asked(() => deps.schedules().update(params)),
    removeSchedule: ({ id }) => ({ removed: deps.schedules().remove(id) }),
    runScheduleNow: async ({ id }) => {
      await deps.ready();
      return asked(() => deps.schedules().runNow(id));
    },
  };
}

function asked<T>(work: () => T): T {
  try {
    return work();
  } catch (error) {
    if (error instanceof ScheduleInputError) throw new ApiFailure('bad-request', error.message);
    throw error;
  }
}
