/**
 * Request validation: `@ValidBody(Dto)` and `@ValidQuery(Dto)` run
 * class-validator's `ValidationPipe` against an explicitly named class, so
 * validation does not depend on `emitDecoratorMetadata`. Unknown fields are
 * rejected; a failure is a 400 whose `error.details` lists every problem,
 * before the handler runs (nothing is written).
 *
 * @module
 */
import { Body, Query, type Type, ValidationPipe } from "@nestjs/common";

/** Options shared by every validated parameter. */
const OPTIONS = { whitelist: true, forbidNonWhitelisted: true, transform: true } as const;

/**
 * The request body, validated as (and transformed into) `type`.
 *
 * @example
 * ```ts
 * import { Controller, Post } from "@nestjs/common";
 * import { IsString } from "class-validator";
 * import { ValidBody } from "./validation.ts";
 * class NoteDto { @IsString() text!: string; }
 * @Controller("notes")
 * class NotesController {
 *   @Post() create(@ValidBody(NoteDto) body: NoteDto) { return body; }
 * }
 * ```
 */
export function ValidBody(type: Type<unknown>): ParameterDecorator {
  return Body(new ValidationPipe({ ...OPTIONS, expectedType: type }));
}

/**
 * The query string, validated as (and transformed into) `type`.
 *
 * @example
 * ```ts
 * import { Controller, Get } from "@nestjs/common";
 * import { IsOptional, IsString } from "class-validator";
 * import { ValidQuery } from "./validation.ts";
 * class SearchQuery { @IsOptional() @IsString() q?: string; }
 * @Controller("search")
 * class SearchController {
 *   @Get() search(@ValidQuery(SearchQuery) query: SearchQuery) { return query; }
 * }
 * ```
 */
export function ValidQuery(type: Type<unknown>): ParameterDecorator {
  return Query(new ValidationPipe({ ...OPTIONS, expectedType: type }));
}
