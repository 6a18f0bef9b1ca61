; ModuleID = '__compute_module_subtract_exponential_fusion_kernel_module'
source_filename = "__compute_module_subtract_exponential_fusion_kernel_module"
target datalayout = "e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-i128:128-f80:128-n8:16:32:64-S128"
target triple = "x86_64-unknown-linux-gnu"

; Function Attrs: mustprogress nofree norecurse nosync nounwind willreturn memory(readwrite, target_mem: none) uwtable
define noalias noundef ptr @subtract_exponential_fusion(ptr nofree readonly captures(none) %0) local_unnamed_addr #0 {
subtract_exponential_fusion_wrapped.exit:
  %1 = getelementptr inbounds nuw i8, ptr %0, i64 24
  %2 = load ptr, ptr %1, align 8, !invariant.load !3
  %3 = load ptr, ptr %2, align 8, !invariant.load !3, !dereferenceable !4
  %4 = getelementptr inbounds nuw i8, ptr %2, i64 16
  %5 = load ptr, ptr %4, align 8, !invariant.load !3, !dereferenceable !5
  %6 = getelementptr inbounds nuw i8, ptr %2, i64 32
  %7 = load ptr, ptr %6, align 8, !invariant.load !3, !dereferenceable !4
  tail call void @llvm.experimental.noalias.scope.decl(metadata !6)
  tail call void @llvm.experimental.noalias.scope.decl(metadata !9)
  tail call void @llvm.experimental.noalias.scope.decl(metadata !11)
  %8 = load float, ptr %5, align 4, !invariant.load !3, !alias.scope !9, !noalias !13
  %9 = load float, ptr %3, align 4, !invariant.load !3, !alias.scope !6, !noalias !14
  %10 = fsub float %9, %8
  %11 = insertelement <1 x float> undef, float %10, i64 0
  %12 = fcmp uge <1 x float> %11, splat (float -8.780000e+01)
  %13 = select <1 x i1> %12, <1 x float> %11, <1 x float> splat (float -8.780000e+01)
  %14 = fcmp ule <1 x float> %13, splat (float 8.880000e+01)
  %15 = select <1 x i1> %14, <1 x float> %13, <1 x float> splat (float 8.880000e+01)
  %exp_f32.i = fmul <1 x float> %15, splat (float f0x3FB8AA3B)
  %exp_f321.i = fadd <1 x float> splat (float 5.000000e-01), %exp_f32.i
  %16 = call <1 x float> @llvm.floor.v1f32(<1 x float> %exp_f321.i)
  %17 = fcmp uge <1 x float> %16, splat (float -1.270000e+02)
  %18 = select <1 x i1> %17, <1 x float> %16, <1 x float> splat (float -1.270000e+02)
  %19 = fcmp ule <1 x float> %18, splat (float 1.270000e+02)
  %20 = select <1 x i1> %19, <1 x float> %18, <1 x float> splat (float 1.270000e+02)
  %exp_f322.i = fmul <1 x float> splat (float f0x3F318000), %20
  %21 = fsub <1 x float> %15, %exp_f322.i
  %exp_f323.i = fmul <1 x float> splat (float f0xB95E8083), %20
  %22 = fsub <1 x float> %21, %exp_f323.i
  %exp_f324.i = fmul <1 x float> %22, splat (float f0x39506967)
  %exp_f325.i = fadd <1 x float> splat (float f0x3AB743CE), %exp_f324.i
  %exp_f326.i = fmul <1 x float> %exp_f325.i, %22
  %exp_f327.i = fadd <1 x float> splat (float f0x3C088908), %exp_f326.i
  %exp_f328.i = fmul <1 x float> %exp_f327.i, %22
  %exp_f329.i = fadd <1 x float> splat (float f0x3D2AA9C1), %exp_f328.i
  %exp_f3210.i = fmul <1 x float> %exp_f329.i, %22
  %exp_f3211.i = fadd <1 x float> splat (float f0x3E2AAAAA), %exp_f3210.i
  %exp_f3212.i = fmul <1 x float> %exp_f3211.i, %22
  %exp_f3213.i = fadd <1 x float> splat (float 5.000000e-01), %exp_f3212.i
  %exp_f3214.i = fmul <1 x float> %22, %22
  %exp_f3215.i = fmul <1 x float> %exp_f3213.i, %exp_f3214.i
  %exp_f3216.i = fadd <1 x float> %22, %exp_f3215.i
  %exp_f3217.i = fadd <1 x float> splat (float 1.000000e+00), %exp_f3216.i
  %23 = fptosi <1 x float> %20 to <1 x i32>
  %24 = add <1 x i32> %23, splat (i32 127)
  %25 = shl <1 x i32> %24, splat (i32 23)
  %26 = bitcast <1 x i32> %25 to <1 x float>
  %exp_f3218.i = fmul <1 x float> %exp_f3217.i, %26
  %27 = extractelement <1 x float> %exp_f3218.i, i64 0
  store float %27, ptr %7, align 4, !alias.scope !11, !noalias !15
  %28 = getelementptr inbounds nuw i8, ptr %3, i64 4
  %29 = load float, ptr %28, align 4, !invariant.load !3, !alias.scope !6, !noalias !14
  %30 = fsub float %29, %8
  %31 = insertelement <1 x float> undef, float %30, i64 0
  %32 = fcmp uge <1 x float> %31, splat (float -8.780000e+01)
  %33 = select <1 x i1> %32, <1 x float> %31, <1 x float> splat (float -8.780000e+01)
  %34 = fcmp ule <1 x float> %33, splat (float 8.880000e+01)
  %35 = select <1 x i1> %34, <1 x float> %33, <1 x float> splat (float 8.880000e+01)
  %exp_f32.i1 = fmul <1 x float> %35, splat (float f0x3FB8AA3B)
  %exp_f321.i2 = fadd <1 x float> splat (float 5.000000e-01), %exp_f32.i1
  %36 = call <1 x float> @llvm.floor.v1f32(<1 x float> %exp_f321.i2)
  %37 = fcmp uge <1 x float> %36, splat (float -1.270000e+02)
  %38 = select <1 x i1> %37, <1 x float> %36, <1 x float> splat (float -1.270000e+02)
  %39 = fcmp ule <1 x float> %38, splat (float 1.270000e+02)
  %40 = select <1 x i1> %39, <1 x float> %38, <1 x float> splat (float 1.270000e+02)
  %exp_f322.i3 = fmul <1 x float> splat (float f0x3F318000), %40
  %41 = fsub <1 x float> %35, %exp_f322.i3
  %exp_f323.i4 = fmul <1 x float> splat (float f0xB95E8083), %40
  %42 = fsub <1 x float> %41, %exp_f323.i4
  %exp_f324.i5 = fmul <1 x float> %42, splat (float f0x39506967)
  %exp_f325.i6 = fadd <1 x float> splat (float f0x3AB743CE), %exp_f324.i5
  %exp_f326.i7 = fmul <1 x float> %exp_f325.i6, %42
  %exp_f327.i8 = fadd <1 x float> splat (float f0x3C088908), %exp_f326.i7
  %exp_f328.i9 = fmul <1 x float> %exp_f327.i8, %42
  %exp_f329.i10 = fadd <1 x float> splat (float f0x3D2AA9C1), %exp_f328.i9
  %exp_f3210.i11 = fmul <1 x float> %exp_f329.i10, %42
  %exp_f3211.i12 = fadd <1 x float> splat (float f0x3E2AAAAA), %exp_f3210.i11
  %exp_f3212.i13 = fmul <1 x float> %exp_f3211.i12, %42
  %exp_f3213.i14 = fadd <1 x float> splat (float 5.000000e-01), %exp_f3212.i13
  %exp_f3214.i15 = fmul <1 x float> %42, %42
  %exp_f3215.i16 = fmul <1 x float> %exp_f3213.i14, %exp_f3214.i15
  %exp_f3216.i17 = fadd <1 x float> %42, %exp_f3215.i16
  %exp_f3217.i18 = fadd <1 x float> splat (float 1.000000e+00), %exp_f3216.i17
  %43 = fptosi <1 x float> %40 to <1 x i32>
  %44 = add <1 x i32> %43, splat (i32 127)
  %45 = shl <1 x i32> %44, splat (i32 23)
  %46 = bitcast <1 x i32> %45 to <1 x float>
  %exp_f3218.i19 = fmul <1 x float> %exp_f3217.i18, %46
  %47 = extractelement <1 x float> %exp_f3218.i19, i64 0
  %48 = getelementptr inbounds nuw i8, ptr %7, i64 4
  store float %47, ptr %48, align 4, !alias.scope !11, !noalias !15
  %49 = getelementptr inbounds nuw i8, ptr %3, i64 8
  %50 = load float, ptr %49, align 4, !invariant.load !3, !alias.scope !6, !noalias !14
  %51 = fsub float %50, %8
  %52 = insertelement <1 x float> undef, float %51, i64 0
  %53 = fcmp uge <1 x float> %52, splat (float -8.780000e+01)
  %54 = select <1 x i1> %53, <1 x float> %52, <1 x float> splat (float -8.780000e+01)
  %55 = fcmp ule <1 x float> %54, splat (float 8.880000e+01)
  %56 = select <1 x i1> %55, <1 x float> %54, <1 x float> splat (float 8.880000e+01)
  %exp_f32.i20 = fmul <1 x float> %56, splat (float f0x3FB8AA3B)
  %exp_f321.i21 = fadd <1 x float> splat (float 5.000000e-01), %exp_f32.i20
  %57 = call <1 x float> @llvm.floor.v1f32(<1 x float> %exp_f321.i21)
  %58 = fcmp uge <1 x float> %57, splat (float -1.270000e+02)
  %59 = select <1 x i1> %58, <1 x float> %57, <1 x float> splat (float -1.270000e+02)
  %60 = fcmp ule <1 x float> %59, splat (float 1.270000e+02)
  %61 = select <1 x i1> %60, <1 x float> %59, <1 x float> splat (float 1.270000e+02)
  %exp_f322.i22 = fmul <1 x float> splat (float f0x3F318000), %61
  %62 = fsub <1 x float> %56, %exp_f322.i22
  %exp_f323.i23 = fmul <1 x float> splat (float f0xB95E8083), %61
  %63 = fsub <1 x float> %62, %exp_f323.i23
  %exp_f324.i24 = fmul <1 x float> %63, splat (float f0x39506967)
  %exp_f325.i25 = fadd <1 x float> splat (float f0x3AB743CE), %exp_f324.i24
  %exp_f326.i26 = fmul <1 x float> %exp_f325.i25, %63
  %exp_f327.i27 = fadd <1 x float> splat (float f0x3C088908), %exp_f326.i26
  %exp_f328.i28 = fmul <1 x float> %exp_f327.i27, %63
  %exp_f329.i29 = fadd <1 x float> splat (float f0x3D2AA9C1), %exp_f328.i28
  %exp_f3210.i30 = fmul <1 x float> %exp_f329.i29, %63
  %exp_f3211.i31 = fadd <1 x float> splat (float f0x3E2AAAAA), %exp_f3210.i30
  %exp_f3212.i32 = fmul <1 x float> %exp_f3211.i31, %63
  %exp_f3213.i33 = fadd <1 x float> splat (float 5.000000e-01), %exp_f3212.i32
  %exp_f3214.i34 = fmul <1 x float> %63, %63
  %exp_f3215.i35 = fmul <1 x float> %exp_f3213.i33, %exp_f3214.i34
  %exp_f3216.i36 = fadd <1 x float> %63, %exp_f3215.i35
  %exp_f3217.i37 = fadd <1 x float> splat (float 1.000000e+00), %exp_f3216.i36
  %64 = fptosi <1 x float> %61 to <1 x i32>
  %65 = add <1 x i32> %64, splat (i32 127)
  %66 = shl <1 x i32> %65, splat (i32 23)
  %67 = bitcast <1 x i32> %66 to <1 x float>
  %exp_f3218.i38 = fmul <1 x float> %exp_f3217.i37, %67
  %68 = extractelement <1 x float> %exp_f3218.i38, i64 0
  %69 = getelementptr inbounds nuw i8, ptr %7, i64 8
  store float %68, ptr %69, align 4, !alias.scope !11, !noalias !15
  %70 = getelementptr inbounds nuw i8, ptr %3, i64 12
  %71 = load float, ptr %70, align 4, !invariant.load !3, !alias.scope !6, !noalias !14
  %72 = fsub float %71, %8
  %73 = insertelement <1 x float> undef, float %72, i64 0
  %74 = fcmp uge <1 x float> %73, splat (float -8.780000e+01)
  %75 = select <1 x i1> %74, <1 x float> %73, <1 x float> splat (float -8.780000e+01)
  %76 = fcmp ule <1 x float> %75, splat (float 8.880000e+01)
  %77 = select <1 x i1> %76, <1 x float> %75, <1 x float> splat (float 8.880000e+01)
  %exp_f32.i39 = fmul <1 x float> %77, splat (float f0x3FB8AA3B)
  %exp_f321.i40 = fadd <1 x float> splat (float 5.000000e-01), %exp_f32.i39
  %78 = call <1 x float> @llvm.floor.v1f32(<1 x float> %exp_f321.i40)
  %79 = fcmp uge <1 x float> %78, splat (float -1.270000e+02)
  %80 = select <1 x i1> %79, <1 x float> %78, <1 x float> splat (float -1.270000e+02)
  %81 = fcmp ule <1 x float> %80, splat (float 1.270000e+02)
  %82 = select <1 x i1> %81, <1 x float> %80, <1 x float> splat (float 1.270000e+02)
  %exp_f322.i41 = fmul <1 x float> splat (float f0x3F318000), %82
  %83 = fsub <1 x float> %77, %exp_f322.i41
  %exp_f323.i42 = fmul <1 x float> splat (float f0xB95E8083), %82
  %84 = fsub <1 x float> %83, %exp_f323.i42
  %exp_f324.i43 = fmul <1 x float> %84, splat (float f0x39506967)
  %exp_f325.i44 = fadd <1 x float> splat (float f0x3AB743CE), %exp_f324.i43
  %exp_f326.i45 = fmul <1 x float> %exp_f325.i44, %84
  %exp_f327.i46 = fadd <1 x float> splat (float f0x3C088908), %exp_f326.i45
  %exp_f328.i47 = fmul <1 x float> %exp_f327.i46, %84
  %exp_f329.i48 = fadd <1 x float> splat (float f0x3D2AA9C1), %exp_f328.i47
  %exp_f3210.i49 = fmul <1 x float> %exp_f329.i48, %84
  %exp_f3211.i50 = fadd <1 x float> splat (float f0x3E2AAAAA), %exp_f3210.i49
  %exp_f3212.i51 = fmul <1 x float> %exp_f3211.i50, %84
  %exp_f3213.i52 = fadd <1 x float> splat (float 5.000000e-01), %exp_f3212.i51
  %exp_f3214.i53 = fmul <1 x float> %84, %84
  %exp_f3215.i54 = fmul <1 x float> %exp_f3213.i52, %exp_f3214.i53
  %exp_f3216.i55 = fadd <1 x float> %84, %exp_f3215.i54
  %exp_f3217.i56 = fadd <1 x float> splat (float 1.000000e+00), %exp_f3216.i55
  %85 = fptosi <1 x float> %82 to <1 x i32>
  %86 = add <1 x i32> %85, splat (i32 127)
  %87 = shl <1 x i32> %86, splat (i32 23)
  %88 = bitcast <1 x i32> %87 to <1 x float>
  %exp_f3218.i57 = fmul <1 x float> %exp_f3217.i56, %88
  %89 = extractelement <1 x float> %exp_f3218.i57, i64 0
  %90 = getelementptr inbounds nuw i8, ptr %7, i64 12
  store float %89, ptr %90, align 4, !alias.scope !11, !noalias !15
  ret ptr null
}

; Function Attrs: mustprogress nocallback nofree nosync nounwind willreturn memory(inaccessiblemem: readwrite)
declare void @llvm.experimental.noalias.scope.decl(metadata) #1

; Function Attrs: nocallback nocreateundeforpoison nofree nosync nounwind speculatable willreturn memory(none)
declare <1 x float> @llvm.floor.v1f32(<1 x float>) #2

; Function Attrs: nocallback nocreateundeforpoison nofree nosync nounwind speculatable willreturn memory(none)
declare <4 x float> @llvm.floor.v4f32(<4 x float>) #2

; Function Attrs: nocallback nocreateundeforpoison nofree nosync nounwind speculatable willreturn memory(none)
declare <8 x float> @llvm.floor.v8f32(<8 x float>) #2

; Function Attrs: nocallback nocreateundeforpoison nofree nosync nounwind speculatable willreturn memory(none)
declare <16 x float> @llvm.floor.v16f32(<16 x float>) #2

attributes #0 = { mustprogress nofree norecurse nosync nounwind willreturn memory(readwrite, target_mem: none) uwtable "frame-pointer"="all" "prefer-vector-width"="256" }
attributes #1 = { mustprogress nocallback nofree nosync nounwind willreturn memory(inaccessiblemem: readwrite) }
attributes #2 = { nocallback nocreateundeforpoison nofree nosync nounwind speculatable willreturn memory(none) }

!llvm.module.flags = !{!0, !1}
!xla_cpu_memory_region_name = !{!2}

!0 = !{i32 2, !"Debug Info Version", i32 3}
!1 = !{i32 1, !"xla_dylib_index", i64 2}
!2 = !{!"xla_cpu_emitter__loop_fusion_kernel_emitter__hlo_opcode__fusion"}
!3 = !{}
!4 = !{i64 16}
!5 = !{i64 4}
!6 = !{!7}
!7 = distinct !{!7, !8, !"subtract_exponential_fusion_wrapped: argument 0"}
!8 = distinct !{!8, !"subtract_exponential_fusion_wrapped"}
!9 = !{!10}
!10 = distinct !{!10, !8, !"subtract_exponential_fusion_wrapped: argument 1"}
!11 = !{!12}
!12 = distinct !{!12, !8, !"subtract_exponential_fusion_wrapped: argument 2"}
!13 = !{!7, !12}
!14 = !{!10, !12}
!15 = !{!7, !10}
